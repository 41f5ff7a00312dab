"""`visiongate test` as a library call: find test files, run them, render the outcome."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._vocabulary import CELL_COUNT, all_cells, format_cell
from ..lint._check import bundled_policy_dir, display_path, searchable
from ._load import load_test_file
from ._run import (
    CaseOutcome,
    Coverage,
    FileOutcome,
    Session,
    coverage_problems,
    merge_coverage,
    run_test_file,
)

TEST_SUFFIXES = (".test.yaml", ".test.yml")


def find_test_files(paths: Sequence[str | Path]) -> list[Path]:
    """Test files named or found in directories (no paths: next to the bundled policies)."""
    targets = [Path(p) for p in paths] or [bundled_policy_dir()]
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            found += sorted(
                p
                for suffix in TEST_SUFFIXES
                for p in target.rglob(f"*{suffix}")
                if p.is_file() and searchable(p, target)
            )
        else:
            found.append(target)
    return found


@dataclass(frozen=True)
class TestRun:
    """Every file run, coverage per policy, and the thresholds asked for."""

    __test__ = False

    files: tuple[FileOutcome, ...]
    coverage: tuple[Coverage, ...]
    min_rules: float | None = None
    min_cells: float | None = None

    @property
    def outcomes(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for f in self.files for o in f.outcomes)

    def count(self, status: str) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def policy_errors(self) -> tuple[FileOutcome, ...]:
        return tuple(f for f in self.files if f.policy_error)

    @property
    def file_errors(self) -> tuple[FileOutcome, ...]:
        return tuple(f for f in self.files if f.test_file.diagnostics)

    @property
    def coverage_problems(self) -> tuple[str, ...]:
        per_policy = [
            p for c in self.coverage for p in coverage_problems(c, self.min_rules, self.min_cells)
        ]
        per_file = [p for f in self.files for p in f.coverage_problems]
        return tuple(dict.fromkeys(per_policy + per_file))

    @property
    def ok(self) -> bool:
        return not (
            self.count("fail")
            or self.count("error")
            or self.policy_errors
            or self.file_errors
            or self.coverage_problems
        )


def run_tests(
    paths: Sequence[str | Path], min_rules: float | None = None, min_cells: float | None = None
) -> TestRun:
    """Run the test files named (or found); caches are shared across files."""
    session = Session()
    files = tuple(
        run_test_file(load_test_file(path, display_path(path)), session)
        for path in find_test_files(paths)
    )
    return TestRun(files, tuple(merge_coverage(files)), min_rules, min_cells)


def _case_lines(outcome: CaseOutcome) -> list[str]:
    case = outcome.case
    cells = f" ({len(outcome.cells)} cells)" if len(outcome.cells) > 1 else ""
    head = f"  {outcome.status.upper():5} {case.name}{cells}"
    if outcome.status == "pass":
        return [head]
    return [f"{head}  [{case.location}]", *(f"        {problem}" for problem in outcome.problems)]


def _file_lines(outcome: FileOutcome) -> list[str]:
    lines = [outcome.test_file.shown]
    lines += [f"  {d.render()}" for d in outcome.test_file.diagnostics]
    if outcome.policy_error:
        lines.append("  ERROR the policy cannot be loaded:")
        lines += [f"    {d.render()}" for d in outcome.policy_error]
    for case_outcome in outcome.outcomes:
        lines += _case_lines(case_outcome)
    return lines


def _coverage_line(coverage: Coverage) -> str:
    line = (
        f"  {coverage.name} ({coverage.file}, sha256 {coverage.sha256[:12]}): "
        f"rules {len(set(coverage.rules) & coverage.exercised)}/{len(coverage.rules)} "
        f"({coverage.rule_percent:.0f}%), "
        f"cells {len(coverage.cells)}/{CELL_COUNT} ({coverage.cell_percent:.0f}%)"
    )
    if coverage.missing_rules:
        line += "\n    rules not exercised: " + ", ".join(f"`{r}`" for r in coverage.missing_rules)
    untested = [format_cell(cell) for cell in all_cells() if cell not in coverage.cells]
    if untested:
        more = f" and {len(untested) - 4} more (see --json)" if len(untested) > 4 else ""
        line += "\n    cells not tested: " + ", ".join(untested[:4]) + more
    return line


def render_text(run: TestRun) -> str:
    lines = [line for outcome in run.files for line in _file_lines(outcome)]
    if run.coverage:
        lines.append("coverage")
        lines += [_coverage_line(coverage) for coverage in run.coverage]
    lines += [f"coverage below threshold: {problem}" for problem in run.coverage_problems]
    problems = len(run.policy_errors) + len(run.file_errors)
    summary = (
        f"{run.count('pass')} passed, {run.count('fail')} failed, {run.count('error')} error(s)"
    )
    if problems:
        summary += f", {problems} file(s) could not run"
    lines.append(f"{summary} in {len(run.files)} file(s)")
    return "\n".join(lines)


def _outcome_dict(outcome: CaseOutcome) -> dict[str, Any]:
    return {
        "name": outcome.case.name,
        "line": outcome.case.location.line,
        "status": outcome.status,
        "problems": list(outcome.problems),
        "cells": [format_cell(cell) for cell in outcome.cells],
        "rules": list(outcome.rules),
    }


def render_json(run: TestRun) -> str:
    document = {
        "version": 1,
        "ok": run.ok,
        "summary": {s: run.count(s) for s in ("pass", "fail", "error")},
        "files": [
            {
                "file": f.test_file.shown,
                "diagnostics": [d.as_dict() for d in f.test_file.diagnostics],
                "policy_error": [d.as_dict() for d in f.policy_error],
                "cases": [_outcome_dict(o) for o in f.outcomes],
            }
            for f in run.files
        ],
        "coverage": [c.as_dict() for c in run.coverage],
        "coverage_problems": list(run.coverage_problems),
    }
    return json.dumps(document, indent=2)
