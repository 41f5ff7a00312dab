"""One lint report, four renderings: text, JSON, GitHub workflow commands and SARIF 2.1.0.

The SARIF checks follow what GitHub code scanning documents it needs: version 2.1.0, a
driver name, rules with ids and descriptions, results with ruleId, level, message.text and
a physical location whose artifact URI is relative to the repository root and whose region
has a startLine of at least 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from visiongate.engine._diagnostics import Diagnostic, Location
from visiongate.engine.tooling.lint._check import FileReport, LintReport, lint_paths
from visiongate.engine.tooling.lint._ignore import Suppressed
from visiongate.engine.tooling.lint._report import (
    render_github,
    render_json,
    render_sarif,
    render_text,
)

DATA = Path(__file__).parent / "data" / "lint"
SARIF_LEVELS = {"error", "warning", "note", "none"}


@pytest.fixture(scope="module")
def report() -> LintReport:
    names = ["shadowed", "gap", "unreadable-file", "bad-ignore", "hit-policy-first"]
    return lint_paths([DATA.relative_to(Path.cwd()) / f"{n}.yaml" for n in names])


@pytest.fixture(scope="module")
def sarif(report: LintReport) -> dict[str, Any]:
    exempted = Suppressed(
        Diagnostic(
            "redundant", "warning", "rule `x` changes no lane", Location("p.yaml", 3, 5), rule="x"
        ),
        "kept for auditors",
        Location("p.yaml", 2, 3),
    )
    with_suppression = LintReport((*report.files, FileReport("p.yaml", (), (exempted,))))
    document: dict[str, Any] = json.loads(render_sarif(with_suppression))
    return document


def test_sarif_top_level(sarif: dict[str, Any]) -> None:
    assert sarif["version"] == "2.1.0"
    assert sarif["$schema"].startswith("https://")
    [run] = sarif["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "visiongate"
    assert driver["semanticVersion"]


def test_sarif_rules_describe_every_code_used(sarif: dict[str, Any]) -> None:
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids))
    for rule in rules:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in SARIF_LEVELS
        assert f"policy_docs/lint/{rule['id']}.md" in rule["help"]["text"]
        assert "helpUri" not in rule  # only absolute URLs are valid there; see --docs-url
    used = {result["ruleId"] for result in run["results"]}
    assert used == set(ids)


def test_sarif_results_have_what_github_needs(sarif: dict[str, Any]) -> None:
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in SARIF_LEVELS
        assert result["message"]["text"]
        [location] = result["locations"]
        physical = location["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert not uri.startswith("/") and "\\" not in uri and ":" not in uri
        region = physical["region"]
        assert region["startLine"] >= 1
        assert region.get("startColumn", 1) >= 1
        assert result["partialFingerprints"]


def test_sarif_counterexample_and_location(sarif: dict[str, Any]) -> None:
    results = sarif["runs"][0]["results"]
    [shadowed] = [r for r in results if r["ruleId"] == "shadowed"]
    region = shadowed["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (20, 5)
    assert shadowed["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "tests/data/lint/shadowed.yaml"
    )
    assert "mode=auto,catalog=vision,aux=unset,path=accepts" in shadowed["properties"]["cells"]
    assert "cells: mode=auto" in shadowed["message"]["text"]
    [unreadable] = [r for r in results if r["ruleId"] == "unreadable-file"]
    assert unreadable["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}


def test_sarif_inline_exemptions_are_suppressions(sarif: dict[str, Any]) -> None:
    results = sarif["runs"][0]["results"]
    [exempted] = [r for r in results if r.get("suppressions")]
    assert exempted["suppressions"] == [{"kind": "inSource", "justification": "kept for auditors"}]
    assert not [r for r in results if r["ruleId"] != "redundant" and r.get("suppressions")]


def test_sarif_help_uri_with_docs_url(report: LintReport) -> None:
    document = json.loads(render_sarif(report, "https://example.org/visiongate/policy_docs/lint/"))
    for rule in document["runs"][0]["tool"]["driver"]["rules"]:
        assert rule["helpUri"] == f"https://example.org/visiongate/policy_docs/lint/{rule['id']}.md"


def test_sarif_validates_against_the_github_subset_schema(sarif: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(
        (Path(__file__).parent / "data" / "sarif-github-subset.schema.json").read_text()
    )
    jsonschema.validate(sarif, schema)


def test_github_annotations(report: LintReport) -> None:
    lines = render_github(report).splitlines()
    shadowed = next(line for line in lines if "visiongate shadowed" in line)
    assert shadowed.startswith("::error file=tests/data/lint/shadowed.yaml,line=20,col=5,")
    assert "title=visiongate shadowed::" in shadowed
    assert "%0Acells: mode=auto" in shadowed and "\n" not in shadowed
    info = next(line for line in lines if "hit-policy-first" in line)
    assert info.startswith("::notice ")
    unreadable = next(line for line in lines if "unreadable-file" in line)
    assert "line=" not in unreadable
    assert lines[-1].startswith("5 file(s) linted")


def test_github_escapes_properties() -> None:
    odd = Diagnostic("gap", "warning", "100% of it, really", Location("a,b:c.yaml", 1, 1))
    [line, _summary] = render_github(LintReport((FileReport("a,b:c.yaml", (odd,)),))).splitlines()
    assert "file=a%2Cb%3Ac.yaml," in line
    assert line.endswith("::100%25 of it, really")


def test_json_shape(report: LintReport) -> None:
    document = json.loads(render_json(report))
    assert document["failed"] is True
    assert document["summary"]["error"] >= 2
    first = document["files"][0]
    assert {"file", "fail_level", "failed", "diagnostics", "suppressed"} <= set(first)
    diagnostic = next(
        d for f in document["files"] for d in f["diagnostics"] if d["code"] == "shadowed"
    )
    assert (diagnostic["line"], diagnostic["column"], diagnostic["rule"]) == (
        20,
        5,
        "native-vision",
    )
    assert len(diagnostic["cells"]) == 2


def test_text_is_the_rendered_diagnostics(report: LintReport) -> None:
    text = render_text(report)
    for diagnostic in report.diagnostics:
        assert diagnostic.render() in text
    assert text.splitlines()[-1].startswith("5 file(s) linted:")
