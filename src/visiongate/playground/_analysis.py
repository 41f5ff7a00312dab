"""What the page shows for a policy text: `lint`'s diagnostics, the 54 cells and `diff`'s changes.

Every figure comes from the code behind the commands (`lint_text`, the compiled table that
`explain` prints, `diff_policies`), so the page and the terminal never disagree. These
functions run in the playground's worker process (`_worker`), which the server can stop when
one takes too long; they never raise for a bad policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from visiongate.engine._diagnostics import Diagnostic
from visiongate.engine._load import CompiledPolicy, analyze_policy_text
from visiongate.engine._vocabulary import FACT_NAMES, all_cells, format_cell
from visiongate.engine.tooling._diff import PolicyDiff, diff_policies
from visiongate.engine.tooling._explain import policy_summary
from visiongate.engine.tooling.lint._check import (
    FileReport,
    LintOptions,
    lint_and_compile,
    lint_config_text,
)

_BASELINES_KEPT = 8


def diagnostic_document(diagnostic: Diagnostic) -> dict[str, object]:
    """A diagnostic as the page draws it: `lint --json`'s fields."""
    return diagnostic.as_dict()


def report_document(report: FileReport) -> dict[str, Any]:
    return {
        "file": report.file,
        "diagnostics": [diagnostic_document(d) for d in report.diagnostics],
        "failed": report.failed,
        "fail_level": report.fail_level,
    }


@dataclass
class Analyst:
    """Compiles baselines once: the file as loaded, the bundled default, another file."""

    options: LintOptions = field(default_factory=LintOptions)
    baselines: dict[str, CompiledPolicy | None] = field(default_factory=dict)

    def baseline(self, text: str, label: str) -> CompiledPolicy | None:
        """The compiled baseline, or None when it does not compile (said on the page)."""
        if text not in self.baselines:
            if len(self.baselines) >= _BASELINES_KEPT:
                self.baselines.clear()
            compiled, found = analyze_policy_text(text, label)
            ok = compiled is not None and not any(d.severity == "error" for d in found)
            self.baselines[text] = compiled if ok else None
        return self.baselines[text]

    def analyze(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Lint the policy (and the config), and lay out its table against the baseline."""
        text, file = str(request["policy"]), str(request.get("file") or "policy.yaml")
        report, compiled = lint_and_compile(text, file, self.options)
        config_file = str(request.get("config_file") or "config.yaml")
        config = lint_config_text(str(request.get("config") or ""), config_file, self.options)
        answer: dict[str, Any] = {
            "lint": report_document(report),
            "config": report_document(config),
            "compiled": compiled is not None,
        }
        if compiled is None:
            return answer
        base_text = _baseline_text(request)
        base_label = str(request.get("baseline_label") or "baseline")
        base = self.baseline(base_text, base_label) if base_text is not None else None
        diff = diff_policies(base, compiled, base_label, file) if base is not None else None
        answer["policy"] = _summary(compiled)
        answer["cells"] = cells_document(compiled, diff)
        answer["diff"] = _diff_summary(diff, base_text is not None)
        return answer


def compiled_policy(text: str, file: str) -> CompiledPolicy | None:
    """The compiled policy when it loads as the gate would load it, else None (for the tests
    and routes: the text was linted just before, so it is recalled from the compile cache)."""
    compiled, found = analyze_policy_text(text, file)
    if compiled is None or any(d.severity == "error" for d in found):
        return None
    return compiled


def _baseline_text(request: Mapping[str, Any]) -> str | None:
    value = request.get("baseline_text")
    return value if isinstance(value, str) else None


def _summary(compiled: CompiledPolicy) -> dict[str, Any]:
    """`explain --json`'s policy summary without the file (the page names none), plus the rules."""
    summary = policy_summary(compiled)
    del summary["path"]
    summary["rules"] = [
        {"id": rule.id, "lane": rule.lane, "line": rule.location.line}
        for rule in compiled.policy.rules
    ]
    return summary


def cells_document(compiled: CompiledPolicy, diff: PolicyDiff | None) -> list[dict[str, Any]]:
    """Every cell with its lane, rule and reason, and what `diff` says changed in it."""
    changes: dict[tuple[str, ...], tuple[str, Any]] = {}
    if diff is not None:
        changes |= {c.cell: ("rule", c.old) for c in diff.rule_changes}
        changes |= {c.cell: ("lane", c.old) for c in diff.lane_changes}
    cells = []
    for cell in all_cells():
        verdict = compiled.table[cell]
        change, old = changes.get(cell, ("", None))
        cells.append(
            {
                "cell": format_cell(cell),
                "facts": dict(zip(FACT_NAMES, cell, strict=True)),
                "lane": verdict.lane,
                "rule": verdict.rule,
                "reason": verdict.reason,
                "matched": list(verdict.matched),
                "change": change,
                "was_lane": old.lane if old is not None else None,
                "was_rule": old.rule if old is not None else None,
            }
        )
    return cells


def _diff_summary(diff: PolicyDiff | None, asked: bool) -> dict[str, Any]:
    if diff is None:
        problem = "the baseline does not compile: nothing to compare" if asked else ""
        return {"summary": problem, "lane_changes": 0, "rule_changes": 0, "settings": []}
    return {
        "summary": diff.summary(),
        "verdict": diff.verdict,
        "lane_changes": len(diff.lane_changes),
        "rule_changes": len(diff.rule_changes),
        "settings": [list(change) for change in diff.setting_changes],
    }
