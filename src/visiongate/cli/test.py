"""`visiongate test`: run `*.test.yaml` policy tests, with exact rule and cell coverage."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK, EXIT_USAGE
from visiongate.engine.tooling.policytest._report import render_json, render_text, run_tests

HELP = "run policy test files (*.test.yaml) and report rule and cell coverage"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="test files or directories (default: the bundled policies' tests)",
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
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def run(args: argparse.Namespace) -> int:
    run_result = run_tests(args.paths, args.min_coverage, args.min_cell_coverage)
    if not run_result.files:
        print("visiongate test: error: no test files found (*.test.yaml)")
        return EXIT_USAGE
    print(render_json(run_result) if args.json else render_text(run_result))
    if run_result.policy_errors:
        return EXIT_INVALID_POLICY
    return EXIT_OK if run_result.ok else EXIT_FINDINGS
