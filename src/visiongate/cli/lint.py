"""`visiongate lint`: load errors and exact table checks, in text, JSON, GitHub or SARIF."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import MappingProxyType

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK, EXIT_USAGE
from visiongate.engine.tooling.lint._check import LintOptions, LintReport, lint_config, lint_paths
from visiongate.engine.tooling.lint._report import FORMATS, RENDERERS, render_sarif
from visiongate.engine.tooling.lint._source import parse_severity_option

HELP = "check policy files: load errors plus exact gap/overlap/shadowing/... checks"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="policy files or directories (default: the bundled policies)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument("--strict", action="store_true", help="fail on warnings too")
    parser.add_argument(
        "--fail-level",
        choices=("error", "warning", "info"),
        help="lowest level that fails (default: the policy's `lint.fail_level`)",
    )
    parser.add_argument(
        "--severity",
        action="append",
        default=[],
        metavar="CODE=LEVEL",
        help="set a code's level: error, warning, info or ignore (repeatable)",
    )
    parser.add_argument(
        "--docs-url", metavar="URL", help="absolute URL of policy_docs/lint, for SARIF `helpUri`"
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="also check an agent config: an invalid image_input_mode is an error (exit 3), "
        "near misses of the keys visiongate reads are warnings",
    )
    parser.add_argument(
        "--policies-only",
        action="store_true",
        help="skip named files without a top-level `policy:` key (for pre-commit hooks)",
    )


def _options(args: argparse.Namespace) -> LintOptions:
    levels = dict(parse_severity_option(item) for item in args.severity)
    fail_level = "warning" if args.strict else args.fail_level
    return LintOptions(MappingProxyType(levels), fail_level)


def run(args: argparse.Namespace) -> int:
    try:
        options = _options(args)
    except ValueError as error:
        print(f"visiongate lint: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    report = _report(args, options)
    if args.format == "sarif":
        text = render_sarif(report, args.docs_url)
    else:
        text = RENDERERS[args.format](report)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    if args.config and any(d.severity == "error" for d in report.files[-1].diagnostics):
        return EXIT_INVALID_POLICY
    return EXIT_FINDINGS if report.failed else EXIT_OK


def _report(args: argparse.Namespace, options: LintOptions) -> LintReport:
    """Policies (the bundled ones when no path is given and no config), then the config."""
    if not args.config:
        return lint_paths(args.paths, options, args.policies_only)
    policies = lint_paths(args.paths, options, args.policies_only).files if args.paths else ()
    return LintReport((*policies, lint_config(args.config, options)))
