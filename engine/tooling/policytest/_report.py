"""`visiongate test` as a library call: find test files, run them, render the outcome."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from visiongate.kernel._display import json_text, visible_lines

from ..._vocabulary import CELL_COUNT, all_cells, format_cell
from .._discover import display_path, find_tests
from .._project import Project, find_project
from ._load import TestFile, load_test_file
from ._run import (
    CaseOutcome,
    Coverage,
    FileOutcome,
    Session,
    coverage_problems,
    merge_coverage,
    run_test_file,
)

SCHEMA_VERSION = 1
"""Of the `--json` output (`visiongate/schemas/test-report.json`)."""


@dataclass(frozen=True)
class TestRun:
    """Every file run, coverage per policy, and the thresholds asked for."""

    __test__ = False

    files: tuple[FileOutcome, ...]
    coverage: tuple[Coverage, ...]
    min_rules: float | None = None
    min_cells: float | None = None
    selected: str | None = None
    """The `--run` pattern, when only the cases it matches ran."""

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
        # A file's own minimums are about all of its cases, not a `--run` subset of them.
        per_file = [] if self.selected else [p for f in self.files for p in f.coverage_problems]
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
    paths: Sequence[str | Path],
    min_rules: float | None = None,
    min_cells: float | None = None,
    *,
    project: Project | None = None,
    select: str | None = None,
) -> TestRun:
    """Run the test files named (or found: no paths, the project's); see `run_test_files`."""
    found = find_tests(project or find_project(), paths)
    return run_test_files(found.files, min_rules, min_cells, select=select)


def run_test_files(
    files: Sequence[Path],
    min_rules: float | None = None,
    min_cells: float | None = None,
    *,
    select: str | None = None,
) -> TestRun:
    """Run test files; caches are shared across files. With `select` (a regular expression),
    only cases whose name it matches run, and files left with no case are dropped."""
    session = Session()
    pattern = re.compile(select) if select else None
    outcomes = []
    for path in files:
        test_file = _selected(load_test_file(path, display_path(path)), pattern)
        if test_file is not None:
            outcomes.append(run_test_file(test_file, session))
    files_run = tuple(outcomes)
    return TestRun(files_run, tuple(merge_coverage(files_run)), min_rules, min_cells, select)


def _selected(test_file: TestFile, pattern: re.Pattern[str] | None) -> TestFile | None:
    if pattern is None or test_file.diagnostics:
        return test_file  # a file that cannot be read is reported whatever was selected
    cases = tuple(case for case in test_file.cases if pattern.search(case.name))
    return replace(test_file, cases=cases) if cases else None


def _case_lines(outcome: CaseOutcome) -> list[str]:
    case = outcome.case
    cells = f" ({len(outcome.cells)} cells)" if len(outcome.cells) > 1 else ""
    head = f"  {outcome.status.upper():5} {case.name}{cells}"
    if outcome.status == "pass":
        return [head]
    return [f"{head}  [{case.location}]", *(f"        {problem}" for problem in outcome.problems)]


def _file_lines(outcome: FileOutcome, verbose: bool) -> list[str]:
    shown = [o for o in outcome.outcomes if verbose or o.status != "pass"]
    if not (verbose or shown or outcome.test_file.diagnostics or outcome.policy_error):
        return []
    lines = [outcome.test_file.shown]
    lines += [f"  {d.render()}" for d in outcome.test_file.diagnostics]
    if outcome.policy_error:
        lines.append("  ERROR the policy cannot be loaded:")
        lines += [f"    {d.render()}" for d in outcome.policy_error]
    for case_outcome in shown:
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


def render_text(run: TestRun, verbose: bool = False) -> str:
    """Failures, coverage and a summary; with `verbose`, every case that passed too."""
    lines = [line for outcome in run.files for line in _file_lines(outcome, verbose)]
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
    if run.selected:
        summary += f" (cases matching `{run.selected}`; file coverage minimums not checked)"
    lines.append(f"{summary} in {len(run.files)} file(s)")
    return visible_lines("\n".join(lines))


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
        "schema_version": SCHEMA_VERSION,
        "ok": run.ok,
        "selected": run.selected,
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
    return json_text(document, indent=2)
