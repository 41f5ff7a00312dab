"""Running policy tests: one outcome per case, the difference explained, and coverage.

Coverage is exact, as OPA users ask for and OPA cannot give (discussion #514): which rules
won at least one tested cell, and which cells of the space a test pinned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from visiongate.kernel._suggest import did_you_mean

from ..._compile import CellVerdict
from ..._diagnostics import Diagnostic, PolicyError
from ..._gate import Gate
from ..._load import CompiledPolicy, compile_policy_text, read_policy_source
from ..._vocabulary import CELL_COUNT, Cell, all_cells, format_cell
from ._load import Case, TestFile

Status = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class CaseOutcome:
    """What one case did: its status, why it failed, and what it covered."""

    case: Case
    status: Status
    problems: tuple[str, ...] = ()
    cells: tuple[Cell, ...] = ()
    rules: tuple[str, ...] = ()
    """The rules that decided the cells this case checked (coverage)."""


@dataclass(frozen=True)
class Coverage:
    """Which rules of one policy the tests exercised and which cells they pinned."""

    name: str
    file: str
    sha256: str
    rules: tuple[str, ...]
    exercised: frozenset[str] = frozenset()
    cells: frozenset[Cell] = frozenset()

    @property
    def missing_rules(self) -> tuple[str, ...]:
        return tuple(rule for rule in self.rules if rule not in self.exercised)

    @property
    def rule_percent(self) -> float:
        return (
            100.0 * len(set(self.rules) & self.exercised) / len(self.rules) if self.rules else 100.0
        )

    @property
    def cell_percent(self) -> float:
        return 100.0 * len(self.cells) / CELL_COUNT

    def add(self, outcomes: Iterable[CaseOutcome]) -> Coverage:
        outcomes = list(outcomes)
        rules = {rule for outcome in outcomes for rule in outcome.rules}
        cells = {cell for outcome in outcomes for cell in outcome.cells}
        return Coverage(
            self.name,
            self.file,
            self.sha256,
            self.rules,
            self.exercised | rules,
            self.cells | cells,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.name,
            "file": self.file,
            "sha256": self.sha256,
            "rules": {
                "total": len(self.rules),
                "exercised": sorted(self.exercised & set(self.rules)),
                "missing": list(self.missing_rules),
                "percent": round(self.rule_percent, 1),
            },
            "cells": {
                "total": CELL_COUNT,
                "covered": len(self.cells),
                "missing": [format_cell(c) for c in all_cells() if c not in self.cells],
                "percent": round(self.cell_percent, 1),
            },
        }


@dataclass
class Session:
    """Caches shared by a run: compiled policies and gates (loading is the slow part)."""

    policies: dict[str, CompiledPolicy] = field(default_factory=dict)
    gates: dict[str, Gate] = field(default_factory=dict)

    def policy(self, reference: str | Path | None) -> CompiledPolicy:
        """Raises `PolicyError` when the policy cannot be loaded."""
        key = str(reference)
        if key not in self.policies:
            text, file = read_policy_source(reference)
            self.policies[key] = compile_policy_text(text, _shown(file))
        return self.policies[key]

    def gate(self, reference: str | Path | None, case: Case) -> Gate:
        config = case.config if not isinstance(case.config, Mapping) else dict(case.config)
        key = json.dumps(
            [
                str(reference),
                str(config) if not isinstance(config, dict) else config,
                str(case.catalog),
                str(case.registry),
            ],
            sort_keys=True,
            default=str,
        )
        if key not in self.gates:
            # Learned routes are this machine's state: a policy test must not depend on them.
            self.gates[key] = Gate.load(
                reference, config, case.catalog, case.registry, routes=False
            )
        return self.gates[key]


def _shown(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        try:
            return path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return path.as_posix()
    return file


def _rule_text(verdict_rule: str | None) -> str:
    return f"rule `{verdict_rule}`" if verdict_rule else "the default"


def _verdict_problem(case: Case, verdict: CellVerdict) -> str | None:
    wrong_lane = verdict.lane != case.expect_lane
    wrong_rule = case.checks_rule and verdict.rule != case.expect_rule
    if not (wrong_lane or wrong_rule):
        return None
    parts = []
    if wrong_lane:
        parts.append(f"expected lane `{case.expect_lane}`, got `{verdict.lane}`")
    if wrong_rule:
        parts.append(f"expected {_rule_text(case.expect_rule)}, got {_rule_text(verdict.rule)}")
    matched = ", ".join(f"`{m}`" for m in verdict.matched) or "none"
    decided = f"{_rule_text(verdict.rule)} decided: {verdict.reason} (matched: {matched})"
    return f"{'; '.join(parts)} — {decided}"


def _unknown_rule(case: Case, compiled: CompiledPolicy) -> str | None:
    ids = [rule.id for rule in compiled.policy.rules]
    if case.checks_rule and case.expect_rule is not None and case.expect_rule not in ids:
        return (
            f"rule `{case.expect_rule}` is not in policy `{compiled.policy.name}`: "
            f"{did_you_mean(case.expect_rule, ids)}"
        )
    return None


def _facts_outcome(case: Case, compiled: CompiledPolicy) -> CaseOutcome:
    cells = case.cells()
    verdicts = [compiled.table[cell] for cell in cells]
    rules = tuple(sorted({v.rule for v in verdicts if v.rule}))
    # Cells that fail the same way are reported together: one explanation, then the cells.
    grouped: dict[str, list[Cell]] = {}
    for cell, verdict in zip(cells, verdicts, strict=True):
        problem = _verdict_problem(case, verdict)
        if problem is not None:
            grouped.setdefault(problem, []).append(cell)
    if not grouped:
        return CaseOutcome(case, "pass", (), tuple(cells), rules)
    failing = sum(len(group) for group in grouped.values())
    problems = [f"{failing} of {len(cells)} cell(s) differ"] if len(cells) > 1 else []
    for problem, group in grouped.items():
        shown = ", ".join(format_cell(cell) for cell in group[:4])
        more = f" and {len(group) - 4} more" if len(group) > 4 else ""
        problems += [problem, f"  cells: {shown}{more}"]
    return CaseOutcome(case, "fail", tuple(problems), tuple(cells), rules)


def _resolved_outcome(case: Case, reference: str | Path | None, session: Session) -> CaseOutcome:
    assert case.provider is not None and case.model is not None
    decision = session.gate(reference, case).decide(provider=case.provider, model=case.model)
    verdict = CellVerdict(decision.lane, decision.rule, decision.reason, decision.matched)
    problems = []
    for name, expected in case.expect_facts.items():
        got = decision.facts[name]
        if got != expected:
            why = decision.provenance.get(name, "")
            problems.append(f"fact `{name}`: expected `{expected}`, got `{got}` ({why})")
    problem = _verdict_problem(case, verdict)
    if problem is not None:
        problems.append(f"{format_cell(decision.cell)}: {problem}")
    rules = (decision.rule,) if decision.rule else ()
    return CaseOutcome(
        case, "fail" if problems else "pass", tuple(problems), (decision.cell,), rules
    )


def run_case(test_file: TestFile, case: Case, session: Session) -> CaseOutcome:
    """Run one case. A policy that cannot load raises `PolicyError`; bad inputs give `error`."""
    compiled = session.policy(test_file.policy)
    unknown = _unknown_rule(case, compiled)
    if unknown is not None:
        return CaseOutcome(case, "error", (unknown,))
    if case.facts is not None:
        return _facts_outcome(case, compiled)
    try:
        return _resolved_outcome(case, test_file.policy, session)
    except PolicyError as error:
        return CaseOutcome(case, "error", tuple(d.render() for d in error.diagnostics))
    except (OSError, ValueError) as error:
        return CaseOutcome(case, "error", (str(error),))


@dataclass(frozen=True)
class FileOutcome:
    """The cases of one test file, or why they could not run."""

    test_file: TestFile
    outcomes: tuple[CaseOutcome, ...] = ()
    policy_error: tuple[Diagnostic, ...] = ()
    coverage: Coverage | None = None

    @property
    def coverage_problems(self) -> tuple[str, ...]:
        return coverage_problems(self.coverage, self.test_file.min_rules, self.test_file.min_cells)


def coverage_problems(
    coverage: Coverage | None, min_rules: float | None, min_cells: float | None
) -> tuple[str, ...]:
    """Thresholds not met, as sentences."""
    if coverage is None:
        return ()
    problems = []
    if min_rules is not None and coverage.rule_percent < min_rules:
        missing = ", ".join(f"`{r}`" for r in coverage.missing_rules)
        problems.append(
            f"rule coverage of `{coverage.name}` is {coverage.rule_percent:.0f}%, "
            f"below {min_rules:g}% (not exercised: {missing})"
        )
    if min_cells is not None and coverage.cell_percent < min_cells:
        problems.append(
            f"cell coverage of `{coverage.name}` is {coverage.cell_percent:.0f}%, "
            f"below {min_cells:g}% ({CELL_COUNT - len(coverage.cells)} cell(s) untested)"
        )
    return tuple(problems)


def empty_coverage(compiled: CompiledPolicy) -> Coverage:
    policy = compiled.policy
    return Coverage(policy.name, policy.path, policy.sha256, tuple(r.id for r in policy.rules))


def run_test_file(test_file: TestFile, session: Session | None = None) -> FileOutcome:
    """Run every case of a parsed test file."""
    session = session or Session()
    if test_file.diagnostics:
        return FileOutcome(test_file)
    try:
        compiled = session.policy(test_file.policy)
    except PolicyError as error:
        return FileOutcome(test_file, policy_error=error.diagnostics)
    outcomes = tuple(run_case(test_file, case, session) for case in test_file.cases)
    return FileOutcome(test_file, outcomes, coverage=empty_coverage(compiled).add(outcomes))


def merge_coverage(files: Sequence[FileOutcome]) -> list[Coverage]:
    """Coverage per policy content (sha256), over every file that tests it."""
    merged: dict[str, Coverage] = {}
    for outcome in files:
        if outcome.coverage is None:
            continue
        key = outcome.coverage.sha256
        found = merged.get(key)
        merged[key] = outcome.coverage if found is None else found.add(outcome.outcomes)
    return sorted(merged.values(), key=lambda c: c.file)
