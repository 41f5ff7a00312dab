"""JUnit XML, the report format most CI systems read (GitLab, Jenkins, Azure, CircleCI).

One `<testsuite>` per file, one `<testcase>` per check; a check that fails carries a
`<failure>` (or an `<error>` when it could not run at all). `lint` and `test` build the
cases; this module only writes the XML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.etree import ElementTree


@dataclass(frozen=True)
class Problem:
    """Why a test case failed: a short type (a lint code, `fail`), a message and details."""

    kind: str
    message: str
    details: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    classname: str
    file: str = ""
    line: int = 0
    failure: Problem | None = None
    error: Problem | None = None
    output: str = ""
    """Printed as `<system-out>`: findings that do not fail the check."""


@dataclass(frozen=True)
class Suite:
    name: str
    cases: tuple[Case, ...]


def _problem(parent: ElementTree.Element, tag: str, problem: Problem) -> None:
    element = ElementTree.SubElement(parent, tag, message=problem.message, type=problem.kind)
    element.text = problem.details or problem.message


def _case(parent: ElementTree.Element, case: Case) -> None:
    attributes = {"name": case.name, "classname": case.classname}
    if case.file:
        attributes["file"] = case.file
    if case.line:
        attributes["line"] = str(case.line)
    element = ElementTree.SubElement(parent, "testcase", attributes)
    if case.failure is not None:
        _problem(element, "failure", case.failure)
    if case.error is not None:
        _problem(element, "error", case.error)
    if case.output:
        ElementTree.SubElement(element, "system-out").text = case.output


def _counts(cases: Sequence[Case]) -> dict[str, str]:
    return {
        "tests": str(len(cases)),
        "failures": str(sum(case.failure is not None for case in cases)),
        "errors": str(sum(case.error is not None for case in cases)),
        "skipped": "0",
    }


def render_junit(name: str, suites: Sequence[Suite]) -> str:
    """The whole report as an XML document."""
    every = [case for suite in suites for case in suite.cases]
    root = ElementTree.Element("testsuites", {"name": name, **_counts(every)})
    for suite in suites:
        element = ElementTree.SubElement(
            root, "testsuite", {"name": suite.name, **_counts(suite.cases)}
        )
        for case in suite.cases:
            _case(element, case)
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body
