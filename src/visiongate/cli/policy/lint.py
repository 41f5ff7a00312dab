"""`visiongate lint`: load errors and exact table checks, as text, JSON, GitHub, SARIF or JUnit."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK
from visiongate.cli._common import (
    UsageError,
    add_format_arguments,
    check_input_file,
    checked,
    chosen_format,
    write_output,
)
from visiongate.cli.policy import policy_files

if TYPE_CHECKING:
    from visiongate.engine.tooling._project import Project
    from visiongate.engine.tooling.lint._check import LintOptions, LintReport

FORMATS = ("text", "json", "github", "sarif", "junit")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="policy files or directories (default: the project's policy files, as "
        "`[tool.visiongate]` or `.visiongate.yaml` configures them)",
    )
    add_format_arguments(parser, FORMATS)
    parser.add_argument("--strict", action="store_true", help="fail on warnings too")
    parser.add_argument(
        "--fail-level",
        choices=("error", "warning", "info"),
        help="lowest level that fails (default: the policy's `lint.fail_level`, then the "
        "project's)",
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
        help="skip named files that do not read like a policy or that the project excludes "
        "(for pre-commit hooks)",
    )


def _options(args: argparse.Namespace, project: Project) -> LintOptions:
    from visiongate.engine.tooling.lint._check import LintOptions
    from visiongate.engine.tooling.lint._source import parse_severity_option

    try:
        levels = dict(parse_severity_option(item) for item in args.severity)
    except ValueError as error:
        raise UsageError(str(error)) from None
    fail_level = "warning" if args.strict else args.fail_level
    return LintOptions.for_project(project, levels, fail_level)


def run(args: argparse.Namespace) -> int:
    from visiongate.engine.tooling._project import find_project

    args.format = chosen_format(args)  # `--json` is `--format json`
    check_input_file(args.config, "agent config")
    project = checked(find_project)
    report = _report(args, project, _options(args, project))
    text = _render(report, args)
    if args.output:
        write_output(args.output, text + "\n")
    else:
        print(text)
    if args.config and any(d.severity == "error" for d in report.files[-1].diagnostics):
        return EXIT_INVALID_POLICY
    return EXIT_FINDINGS if report.failed else EXIT_OK


def _render(report: LintReport, args: argparse.Namespace) -> str:
    from visiongate.engine.tooling.lint._report import RENDERERS, render_sarif

    form = args.format
    if form == "sarif":
        return render_sarif(report, args.docs_url)
    return RENDERERS[form](report)


def _report(args: argparse.Namespace, project: Project, options: LintOptions) -> LintReport:
    """The project's policies (or those named), then the agent config when one is given."""
    from visiongate.engine.tooling.lint._check import LintReport, lint_config, lint_files

    if args.config and not args.paths:
        return LintReport((lint_config(args.config, options),))
    files = policy_files(project, args.paths, policies_only=args.policies_only)
    policies = lint_files([str(path) for path in files], options).files
    config = (lint_config(args.config, options),) if args.config else ()
    return LintReport((*policies, *config))
