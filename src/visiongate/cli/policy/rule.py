"""`visiongate rule [CODE]`: a lint code's documentation page, read from the installed package
(like `ruff rule`); without a code, every code with its default level and summary."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_OK
from visiongate.cli._common import UsageError, print_json

SCHEMA_VERSION = 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE", help="a lint code, e.g. `gap`")
    parser.add_argument("--json", action="store_true", help="print the code's entry as JSON")


def run(args: argparse.Namespace) -> int:
    from visiongate.engine.tooling.lint._codes import LINT_CODES

    if args.code is None:
        return _list(args.json)
    entry = LINT_CODES.get(args.code)
    if entry is None:
        from visiongate.kernel._suggest import did_you_mean

        raise UsageError(
            f"unknown lint code `{args.code}`: {did_you_mean(args.code, list(LINT_CODES))}"
        )
    page = _page(args.code)
    if args.json:
        print_json(
            {
                "schema_version": SCHEMA_VERSION,
                "code": entry.code,
                "severity": entry.severity,
                "category": entry.category,
                "summary": entry.summary,
                "fixed": entry.fixed,
                "page": page,
            }
        )
    else:
        print(page.rstrip("\n"))
    return EXIT_OK


def _page(code: str) -> str:
    from importlib import resources

    page = resources.files("visiongate.policy_docs") / "lint" / f"{code}.md"
    try:
        return page.read_text(encoding="utf-8")
    except OSError as error:  # an installation without its package data
        raise UsageError(f"the page of `{code}` is not installed: {error.strerror}") from None


def _list(as_json: bool) -> int:
    from visiongate.engine.tooling.lint._codes import LINT_CODES

    if as_json:
        codes = [
            {"code": e.code, "severity": e.severity, "category": e.category, "summary": e.summary}
            for e in LINT_CODES.values()
        ]
        print_json({"schema_version": SCHEMA_VERSION, "codes": codes})
        return EXIT_OK
    width = max(len(code) for code in LINT_CODES)
    for entry in LINT_CODES.values():
        level = "error (fixed)" if entry.fixed else entry.severity
        print(f"{entry.code:<{width}}  {level:<13}  {entry.summary}")
    print(f"\n{len(LINT_CODES)} codes; `visiongate rule CODE` shows one code's page")
    return EXIT_OK
