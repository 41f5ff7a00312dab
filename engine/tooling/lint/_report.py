"""Presenters for lint findings: text, JSON, GitHub workflow commands, SARIF 2.1.0, JUnit.

Detection lives in `_check`; these functions only render one `LintReport` (Cedar renders the
same diagnostics as human, plain or JSON output; Regal adds `github` and `sarif`; ruff
`junit`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from visiongate import __version__
from visiongate.kernel._display import json_text, visible_lines

from ..._diagnostics import SEVERITY_RANK, Diagnostic
from .._junit import Case, Problem, Suite, render_junit
from ._check import FileReport, LintReport
from ._codes import LINT_CODES, docs_path, lint_code
from ._ignore import Suppressed

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "visiongate"
FORMATS = ("text", "json", "github", "sarif", "junit")
SCHEMA_VERSION = 1
"""Of the `--format json` output (`visiongate/schemas/lint-report.json`)."""
FMT_FIXES = frozenset({"yaml-boolean-word", "unquoted-version"})
"""Codes whose finding `visiongate fmt` rewrites away."""


def _summary_line(report: LintReport) -> str:
    counts = report.counts()
    files = len(report.files)
    parts = [f"{counts[level]} {level}(s)" for level in ("error", "warning", "info")]
    line = f"{files} file(s) linted: {', '.join(parts)}"
    if report.suppressed:
        line += f", {len(report.suppressed)} exempted inline"
    return line


def _fmt_line(report: LintReport) -> list[str]:
    files = sorted({d.location.file for d in report.diagnostics if d.code in FMT_FIXES})
    if not files:
        return []
    return [
        f"`visiongate fmt {' '.join(files)}` rewrites the yaml-boolean-word and "
        "unquoted-version findings"
    ]


def render_text(report: LintReport) -> str:
    """The human format: one block per finding (`file:line:col: level[code]: message`), each
    naming the command that shows its documentation page."""
    blocks = [
        f"{diagnostic.render()}\n  rule: `visiongate rule {diagnostic.code}`"
        for diagnostic in report.diagnostics
    ]
    return visible_lines("\n".join([*blocks, _summary_line(report), *_fmt_line(report)]))


def _suppressed_dict(item: Suppressed) -> dict[str, object]:
    return {
        **item.diagnostic.as_dict(),
        "reason": item.reason,
        "comment_line": item.comment.line,
    }


def render_json(report: LintReport) -> str:
    """One JSON document: every finding, the exempted ones apart, counts and the verdict."""
    document = {
        "schema_version": SCHEMA_VERSION,
        "failed": report.failed,
        "summary": report.counts(),
        "files": [
            {
                "file": item.file,
                "fail_level": item.fail_level,
                "failed": item.failed,
                "diagnostics": [d.as_dict() for d in item.diagnostics],
                "suppressed": [_suppressed_dict(s) for s in item.suppressed],
            }
            for item in report.files
        ],
    }
    return json_text(document, indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _github_line(diagnostic: Diagnostic) -> str:
    location = diagnostic.location
    properties = [f"file={_escape_property(location.file)}"]
    if location.line:
        properties.append(f"line={location.line}")
        if location.column:
            properties.append(f"col={location.column}")
    properties.append(f"title={_escape_property(f'visiongate {diagnostic.code}')}")
    body = diagnostic.message
    if diagnostic.cells:
        body += "\ncells: " + ", ".join(diagnostic.cells)
    if diagnostic.help:
        body += f"\nhelp: {diagnostic.help}"
    level = _GITHUB_LEVEL[diagnostic.severity]
    return f"::{level} {','.join(properties)}::{_escape_data(body)}"


def render_github(report: LintReport) -> str:
    """GitHub Actions workflow commands: one annotation per finding, then the summary."""
    lines = [_github_line(diagnostic) for diagnostic in report.diagnostics]
    return "\n".join([*lines, _summary_line(report)])


# -- SARIF ---------------------------------------------------------------------------------------

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _artifact_uri(file: str) -> str:
    if file.startswith("/"):
        return "file://" + quote(file)
    return quote(file)


def _rule_descriptor(code: str, docs_url: str | None) -> dict[str, Any]:
    entry = lint_code(code)
    page = docs_path(code)
    descriptor: dict[str, Any] = {
        "id": code,
        "name": "".join(part.capitalize() for part in code.split("-")),
        "shortDescription": {"text": entry.summary},
        "fullDescription": {"text": entry.summary},
        "defaultConfiguration": {"level": _SARIF_LEVEL[entry.severity]},
        "help": {
            "text": f"{entry.summary}. See {page} in the visiongate repository.",
            "markdown": f"{entry.summary}. See [`{page}`]({page}).",
        },
        "properties": {"tags": ["visiongate", entry.category]},
    }
    if docs_url:
        descriptor["helpUri"] = f"{docs_url.rstrip('/')}/{code}.md"
    return descriptor


def _fingerprint(diagnostic: Diagnostic) -> str:
    # Stable across edits that move lines: the code, the file, the rule and the cells.
    key = "\0".join([diagnostic.code, diagnostic.location.file, diagnostic.rule, *diagnostic.cells])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _sarif_message(diagnostic: Diagnostic) -> str:
    text = diagnostic.message
    if diagnostic.cells:
        text += f" (cells: {', '.join(diagnostic.cells)})"
    if diagnostic.help:
        text += f". Help: {diagnostic.help}"
    return text


def _sarif_result(
    diagnostic: Diagnostic, index: dict[str, int], suppression: Suppressed | None = None
) -> dict[str, Any]:
    location = diagnostic.location
    region = {"startLine": max(location.line, 1)}
    if location.line and location.column:
        region["startColumn"] = location.column
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": index[diagnostic.code],
        "level": _SARIF_LEVEL[diagnostic.severity],
        "message": {"text": _sarif_message(diagnostic)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _artifact_uri(location.file)},
                    "region": region,
                }
            }
        ],
        "partialFingerprints": {"visiongateFinding/v1": _fingerprint(diagnostic)},
        "properties": {"cells": list(diagnostic.cells), "rule": diagnostic.rule},
    }
    if suppression is not None:
        result["suppressions"] = [{"kind": "inSource", "justification": suppression.reason}]
    return result


def render_sarif(report: LintReport, docs_url: str | None = None) -> str:
    """SARIF 2.1.0 as GitHub code scanning ingests it; inline exemptions become suppressions.

    `docs_url`, when given, is an absolute URL of the `policy_docs/lint` folder: each rule
    then gets a `helpUri`. Without it the rule help names the page as text (a relative
    `helpUri` is not a valid absolute URI).
    """
    used = sorted(
        {d.code for d in report.diagnostics} | {s.diagnostic.code for s in report.suppressed},
        key=lambda code: (list(LINT_CODES).index(code) if code in LINT_CODES else 999, code),
    )
    index = {code: position for position, code in enumerate(used)}
    results = [_sarif_result(d, index) for d in report.diagnostics]
    results += [_sarif_result(s.diagnostic, index, s) for s in report.suppressed]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule_descriptor(code, docs_url) for code in used],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json_text(log, indent=2)


def _junit_case(item: FileReport, diagnostic: Diagnostic) -> Case:
    location = diagnostic.location
    details = diagnostic.render() + f"\n  rule: `visiongate rule {diagnostic.code}`"
    return Case(
        f"{diagnostic.code} at {location.line}:{location.column}",
        item.file,
        item.file,
        location.line,
        failure=Problem(diagnostic.code, diagnostic.message, details),
    )


def _junit_suite(item: FileReport) -> Suite:
    threshold = SEVERITY_RANK[item.fail_level]
    failing = [d for d in item.diagnostics if SEVERITY_RANK[d.severity] >= threshold]
    others = [d for d in item.diagnostics if SEVERITY_RANK[d.severity] < threshold]
    cases = [_junit_case(item, diagnostic) for diagnostic in failing]
    if not failing:
        output = "\n".join(d.render() for d in others)
        cases.append(Case("lint", item.file, item.file, output=output))
    return Suite(item.file, tuple(cases))


def render_junit_report(report: LintReport) -> str:
    """JUnit XML: a suite per file, a failing case per finding at or above the fail level
    (findings below it are the `system-out` of the file's passing case)."""
    return render_junit("visiongate lint", [_junit_suite(item) for item in report.files])


RENDERERS: dict[str, Callable[[LintReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
    "junit": render_junit_report,
}
