"""`visiongate test`: run `*.test.yaml` policy tests, with exact rule and cell coverage."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK
from visiongate.cli._common import UsageError, add_format_arguments, checked, chosen_format

if TYPE_CHECKING:
    from visiongate.engine.tooling._project import Project
    from visiongate.engine.tooling.policytest._report import TestRun

FORMATS = ("text", "json", "junit")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="test files or directories (default: the project's policy tests: files that "
        "declare `visiongate: policy-test`, and those the project's `tests` globs name)",
    )
    parser.add_argument(
        "--min-coverage",
        type=float,
        metavar="N",
        help="fail when a policy's rule coverage is below N percent",
    )
    parser.add_argument(
        "--min-cell-coverage",
        type=float,
        metavar="N",
        help="fail when a policy's cell coverage is below N percent",
    )
    parser.add_argument(
        "--run",
        metavar="REGEX",
        help="run only the cases whose name matches REGEX (file coverage minimums are then "
        "not checked)",
    )
    add_format_arguments(parser, FORMATS)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also list every case that passed"
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine.tooling._project import find_project
    from visiongate.engine.tooling.policytest._report import run_test_files

    args.format = chosen_format(args)  # `--json` is `--format json`
    _check_pattern(args.run)
    project = checked(find_project)
    files = _test_files(args, project)
    result = run_test_files(files, args.min_coverage, args.min_cell_coverage, select=args.run)
    if not result.files:
        raise UsageError(f"no test case matches `{args.run}` in {len(files)} test file(s)")
    print(_render(result, args.format, args.verbose))
    if result.policy_errors:
        return EXIT_INVALID_POLICY
    return EXIT_OK if result.ok else EXIT_FINDINGS


def _check_pattern(pattern: str | None) -> None:
    if pattern is None:
        return
    try:
        re.compile(pattern)
    except re.error as error:
        raise UsageError(f"`--run {pattern}` is not a regular expression: {error}") from None


def _test_files(args: argparse.Namespace, project: Project) -> list[Path]:
    from visiongate.engine.tooling._discover import MissingPathError, find_tests

    try:
        found = find_tests(project, args.paths)
    except MissingPathError as error:
        raise UsageError(str(error)) from None
    for path, why in found.skipped:
        print(f"visiongate test: warning: skipped `{path}`: {why}", file=sys.stderr)
    if not found.files:
        where = ", ".join(f"`{place}`" for place in found.searched)
        raise UsageError(
            f"no policy test files found under {where}; a test file declares "
            f"`visiongate: policy-test` or is named by the `tests` globs ({project.label})"
        )
    return list(found.files)


def _render(result: TestRun, form: str, verbose: bool) -> str:
    from visiongate.engine.tooling.policytest._report import render_json, render_text

    if form == "json":
        return render_json(result)
    if form == "junit":
        from visiongate.engine.tooling.policytest._junit import render_junit_run

        return render_junit_run(result)
    return render_text(result, verbose)
