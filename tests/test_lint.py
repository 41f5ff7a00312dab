"""`visiongate lint`: every code at its line with its counterexample; levels; ignores; exactness.

The fixtures in tests/data/lint are one broken policy per code; `expected.yaml` says where
each code must point and which cells prove it.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from visiongate.cli import main
from visiongate.engine import FACTS, LANES
from visiongate.engine._load import compile_policy_text
from visiongate.engine.tooling.lint._check import LintOptions, lint_file, lint_paths, lint_text
from visiongate.engine.tooling.lint._codes import LINT_CODES, POLICY_CATEGORIES

DATA = Path(__file__).parent / "data" / "lint"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load((DATA / "expected.yaml").read_text())
ROOT = Path(__file__).parent.parent


POLICY_CODES = {c for c, e in LINT_CODES.items() if e.category in POLICY_CATEGORIES}


def test_every_code_has_a_fixture_and_an_expectation() -> None:
    # Policy codes; those of agent configs, registries and catalogs: tests/test_rule_pages.py.
    assert set(EXPECTED) == POLICY_CODES
    assert {p.stem for p in DATA.glob("*.yaml")} - {"expected"} == POLICY_CODES


@pytest.mark.parametrize("code", sorted(EXPECTED))
def test_fixture_reports_its_code_at_its_line_with_its_cells(code: str) -> None:
    want = EXPECTED[code]
    report = lint_file(DATA / f"{code}.yaml")
    found = [d for d in report.diagnostics if d.code == code]
    assert found, [d.render() for d in report.diagnostics]
    diagnostic = found[0]
    where = (diagnostic.location.line, diagnostic.location.column)
    assert where == (want["line"], want["column"]), diagnostic.render()
    assert diagnostic.location.file.endswith(f"{code}.yaml")
    assert diagnostic.rule == want.get("rule", diagnostic.rule)
    if "cells" in want:
        assert list(diagnostic.cells) == want["cells"]
    if "cell_count" in want:
        assert len(diagnostic.cells) == want["cell_count"]
        assert set(want["cells_include"]) <= set(diagnostic.cells)
    assert diagnostic.severity == LINT_CODES[code].severity
    assert report.failed == (
        diagnostic.severity == "error" or any(d.severity == "error" for d in report.diagnostics)
    )


def test_shipped_policies_lint_clean_under_strict() -> None:
    report = lint_paths([], LintOptions(fail_level="warning"))
    assert len(report.files) >= 4
    assert not report.failed, "\n".join(d.render() for d in report.diagnostics)
    assert {d.severity for d in report.diagnostics} <= {"info"}


def test_directory_scan_skips_test_files_and_non_policies() -> None:
    files = {p.name for p in lint_paths([ROOT / "policies"]).files for p in [Path(p.file)]}
    assert "default.yaml" in files
    assert not {name for name in files if name.endswith(".test.yaml")}
    assert "providers.yaml" not in files


# -- levels -----------------------------------------------------------------------------------

SHADOWED = (DATA / "shadowed.yaml").read_text()


def _codes(text: str, options: LintOptions | None = None) -> dict[str, str]:
    return {d.code: d.severity for d in lint_text(text, "p.yaml", options).diagnostics}


def test_policy_lint_section_sets_levels_and_fail_level() -> None:
    text = SHADOWED + "lint:\n  severity: {shadowed: warning, hit-policy-first: ignore}\n"
    assert _codes(text) == {"shadowed": "warning"}
    assert not lint_text(text, "p.yaml").failed
    strict = text + "  fail_level: warning\n"
    assert lint_text(strict, "p.yaml").failed


def test_command_line_levels_win_over_the_file() -> None:
    text = SHADOWED + "lint:\n  severity: {shadowed: warning}\n"
    options = LintOptions(MappingProxyType({"shadowed": "error"}))
    assert _codes(text, options)["shadowed"] == "error"


def test_load_errors_cannot_be_lowered() -> None:
    text = (DATA / "overlap.yaml").read_text() + "lint:\n  severity: {overlap: info}\n"
    codes = _codes(text, LintOptions(MappingProxyType({"overlap": "ignore"})))
    assert codes["overlap"] == "error"


def test_strict_fails_on_warnings_but_never_on_info() -> None:
    gap = (DATA / "gap.yaml").read_text()
    assert not lint_text(gap, "g.yaml").failed
    assert lint_text(gap, "g.yaml", LintOptions(fail_level="warning")).failed
    first = (DATA / "hit-policy-first.yaml").read_text()
    assert not lint_text(first, "f.yaml", LintOptions(fail_level="warning")).failed


# -- inline ignores -------------------------------------------------------------------------------


def _with_comment(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def test_ignore_on_the_line_above_the_rule_with_a_reason() -> None:
    text = _with_comment(
        SHADOWED,
        "  - id: native-vision\n",
        "  # visiongate: ignore[shadowed] because kept as documentation\n  - id: native-vision\n",
    )
    report = lint_text(text, "p.yaml")
    assert "shadowed" not in {d.code for d in report.diagnostics}
    assert [(s.diagnostic.code, s.reason) for s in report.suppressed] == [
        ("shadowed", "kept as documentation")
    ]
    assert not report.failed


def test_trailing_ignore_on_the_finding_line() -> None:
    text = (DATA / "irrelevant-fact.yaml").read_text()
    text = _with_comment(
        text,
        "      aux: unset\n",
        "      aux: unset  # visiongate: ignore[irrelevant-fact] because clearer\n",
    )
    assert "irrelevant-fact" not in _codes(text)


def test_ignore_on_the_default_line_exempts_a_gap() -> None:
    text = (DATA / "gap.yaml").read_text()
    text = _with_comment(
        text, "default: text\n", "default: text  # visiongate: ignore[gap] because fail closed\n"
    )
    assert "gap" not in _codes(text)


def test_ignore_without_reason_is_reported_and_not_applied() -> None:
    codes = _codes((DATA / "bad-ignore.yaml").read_text())
    assert codes["bad-ignore"] == "warning"
    assert codes["redundant"] == "warning"


@pytest.mark.parametrize(
    ("comment", "message"),
    [
        ("# visiongate: ignore[shadowd] because typo", "unknown lint code `shadowd`"),
        ("# visiongate: ignore[overlap] because no", "`overlap` is a load error"),
        ("# visiongate: ignore shadowed", "cannot read the directive"),
        ("# visiongate: ignore[] because nothing", "names no code"),
    ],
)
def test_bad_ignore_comments(comment: str, message: str) -> None:
    text = _with_comment(
        SHADOWED, "  - id: native-vision\n", f"  {comment}\n  - id: native-vision\n"
    )
    bad = [d for d in lint_text(text, "p.yaml").diagnostics if d.code == "bad-ignore"]
    assert bad and message in bad[0].message, [d.render() for d in bad]
    assert bad[0].location.line == 20


def test_unused_ignore_is_reported_at_the_comment() -> None:
    report = lint_text((DATA / "unused-ignore.yaml").read_text(), "u.yaml")
    [unused] = [d for d in report.diagnostics if d.code == "unused-ignore"]
    assert (unused.location.line, unused.location.column) == (8, 22)


def test_hash_inside_a_quoted_reason_is_not_a_comment() -> None:
    text = SHADOWED.replace(
        "reason: a vision model on a route that accepts images",
        'reason: "see #visiongate: ignore[shadowed] because quoted"',
    )
    assert "shadowed" in _codes(text)


# -- command line ---------------------------------------------------------------------------------


def test_cli_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(ROOT / "policies"), "--strict"]) == 0
    assert main(["lint", str(DATA / "shadowed.yaml")]) == 1
    assert main(["lint", str(DATA / "gap.yaml")]) == 0
    assert main(["lint", str(DATA / "gap.yaml"), "--strict"]) == 1
    assert main(["lint", str(DATA / "gap.yaml"), "--severity", "gap=error"]) == 1
    assert main(["lint", str(DATA / "gap.yaml"), "--severity", "gapp=error"]) == 2
    assert "did you mean `gap`?" in capsys.readouterr().err


def test_cli_output_file(tmp_path: Path) -> None:
    out = tmp_path / "lint.sarif"
    assert main(["lint", str(DATA / "shadowed.yaml"), "--format", "sarif", "-o", str(out)]) == 1
    assert '"ruleId": "shadowed"' in out.read_text()


# -- exactness: each "what if" the linter claims is checked against the real compiler -------------

FACT_VALUES = {fact: list(values) for fact, values in FACTS.items()}


def _policy(rules: list[dict[str, Any]], hit_policy: str = "first") -> str:
    document = {
        "policy": "p",
        "version": "1",
        "description": "a policy for the exactness checks",
        "hit_policy": hit_policy,
        "default": "text",
        "rules": rules,
    }
    return yaml.safe_dump(document, sort_keys=False)


def _lanes(text: str) -> dict[Any, str]:
    compiled = compile_policy_text(text, "p.yaml")
    return {cell: verdict.lane for cell, verdict in compiled.table.items()}


def _without(rules: list[dict[str, Any]], rule_id: str, fact: str | None) -> list[dict[str, Any]]:
    """The rules with one rule removed (fact None) or one `when` entry of it removed."""
    changed = []
    for rule in rules:
        if rule["id"] != rule_id:
            changed.append(rule)
        elif fact is not None:
            when = {k: v for k, v in rule.get("when", {}).items() if k != fact}
            changed.append({**rule, "when": when})
    return changed


def _check_claims(rules: list[dict[str, Any]]) -> None:
    text = _policy(rules)
    lanes = _lanes(text)
    for claim in lint_text(text, "p.yaml").diagnostics:
        if claim.code == "redundant":
            assert _lanes(_policy(_without(rules, claim.rule, None))) == lanes, claim.render()
        if claim.code in ("irrelevant-fact", "full-domain-entry"):
            fact = str(claim.document_path[-1])
            assert _lanes(_policy(_without(rules, claim.rule, fact))) == lanes, claim.render()
        if claim.code == "contractible":
            assert claim.rule in {r["id"] for r in rules}


RULES = [
    {"id": "text-mode", "when": {"mode": "text"}, "lane": "text", "reason": "r"},
    {"id": "refuses", "when": {"path": "refuses"}, "lane": "text", "reason": "r"},
    {
        "id": "no-vision",
        "when": {"catalog": "no_vision", "aux": "unset"},
        "lane": "text",
        "reason": "r",
    },
    {
        "id": "auto-aux-vision",
        "when": {"mode": "auto", "aux": "set", "catalog": "vision"},
        "lane": "text",
        "reason": "r",
    },
    {"id": "aux", "when": {"aux": "set"}, "lane": "text", "reason": "r"},
    {"id": "rest", "lane": "native", "reason": "r"},
]


def test_redundant_and_irrelevant_claims_hold_when_applied() -> None:
    codes = {d.code for d in lint_text(_policy(RULES), "p.yaml").diagnostics}
    assert {"redundant", "irrelevant-fact"} <= codes
    _check_claims(RULES)


@st.composite
def _rules(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(2, 5))
    rules = []
    for index in range(count):
        when = {}
        for fact, values in FACT_VALUES.items():
            if draw(st.booleans()):
                chosen = draw(st.lists(st.sampled_from(values), min_size=1, unique=True))
                when[fact] = sorted(chosen, key=values.index)
        lane = draw(st.sampled_from(LANES))
        rules.append({"id": f"r{index}", "when": when, "lane": lane, "reason": "r"})
    return rules


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rules())
def test_claims_hold_for_generated_first_policies(rules: list[dict[str, Any]]) -> None:
    _check_claims(rules)


@settings(max_examples=30, deadline=None)
@given(_rules())
def test_rules_that_win_and_are_not_redundant_do_matter(rules: list[dict[str, Any]]) -> None:
    text = _policy(rules)
    compiled = compile_policy_text(text, "p.yaml")
    flagged = {
        d.rule
        for d in lint_text(text, "p.yaml").diagnostics
        if d.code in ("redundant", "duplicate")
    }
    lanes = {cell: v.lane for cell, v in compiled.table.items()}
    for rule in rules:
        wins = [cell for cell, v in compiled.table.items() if v.rule == rule["id"]]
        if not wins or rule["id"] in flagged:
            continue
        has_twin_below = any(d.code == "duplicate" for d in lint_text(text, "p.yaml").diagnostics)
        if has_twin_below:
            continue
        after = compile_policy_text(_policy(_without(rules, rule["id"], None)), "p.yaml")
        changed = any(after.table[c].lane != lanes[c] or after.table[c].rule is None for c in wins)
        assert changed, f"`{rule['id']}` is not flagged redundant but removing it changes nothing"


# -- pre-commit hooks ------------------------------------------------------------------------


def test_pre_commit_hooks_run_clean_on_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {hook["id"] for hook in hooks} == {
        "visiongate-fmt",
        "visiongate-lint",
        "visiongate-test",
        "visiongate-docs-check",
    }
    changed = ["policies/default.yaml", "policies/providers.yaml", ".pre-commit-hooks.yaml"]
    for hook in hooks:
        command, *arguments = hook["entry"].split()
        assert command == "visiongate"
        files = changed if hook.get("pass_filenames", True) else []
        assert main([*arguments, *hook.get("args", []), *files]) == 0, hook["id"]


def _overlapping_groups(*sizes: int) -> str:
    """A `unique` policy whose rules fall in disjoint groups; the rules of one group all
    overlap each other, so a group of n rules makes n(n-1)/2 overlapping pairs."""
    conditions = [
        "{mode: text}",
        "{mode: native}",
        "{mode: auto, catalog: vision}",
        "{mode: auto, catalog: no_vision}",
        "{mode: auto, catalog: unknown}",
    ]
    rules = [
        f"  - id: g{group}-r{index}\n    when: {conditions[group]}\n    lane: text\n"
        f"    reason: group {group}\n"
        for group, size in enumerate(sizes)
        for index in range(size)
    ]
    head = "policy: p\nversion: '1'\ndescription: d\nhit_policy: unique\ndefault: text\n"
    return head + "rules:\n" + "".join(rules)


@pytest.mark.parametrize(
    ("sizes", "pairs", "more"),
    [((10, 3, 2, 2), 50, False), ((10, 3, 2, 2, 2), 51, True)],
    ids=["exactly the bound", "one over"],
)
def test_overlaps_say_more_pairs_only_when_there_are_more(
    sizes: tuple[int, ...], pairs: int, more: bool
) -> None:
    overlaps = [
        d
        for d in lint_text(_overlapping_groups(*sizes), "p.yaml").diagnostics
        if d.code == "overlap"
    ]
    listed = [d for d in overlaps if d.cells]
    assert len(listed) == min(pairs, 50)
    assert any("more pairs of rules overlap" in d.message for d in overlaps) is more
