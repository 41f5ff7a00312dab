"""What OPA, Regal and ruff users expect: `--version`, `rule CODE`, JUnit reports, `test --run`
and a quiet default, `docs` for the operator's own policies (issue 14)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from _cli_helpers import POLICIES, run

from visiongate import __version__
from visiongate.cli.policy.lint import FORMATS as LINT_CLI_FORMATS
from visiongate.engine._vocabulary import LANGUAGE_VERSION
from visiongate.engine.tooling.lint._codes import LINT_CODES
from visiongate.engine.tooling.lint._report import FORMATS

LINT_DATA = Path(__file__).parent / "data" / "lint"
DOCS = Path(__file__).parent.parent / "policy_docs"


@pytest.mark.parametrize("argv", [["--version"], ["version"]])
def test_version_names_the_package_the_language_and_the_record_schema(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, *argv)
    assert code == 0
    assert out.strip() == (
        f"visiongate {__version__} (policy language {LANGUAGE_VERSION}, decision record schema 1)"
    )


def test_the_sarif_driver_carries_the_tool_version(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = run(capsys, "lint", str(LINT_DATA / "gap.yaml"), "--format", "sarif")
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    assert driver["version"] == driver["semanticVersion"] == __version__


def test_rule_prints_every_page_from_the_installed_package(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for code in LINT_CODES:
        status, out, _err = run(capsys, "rule", code)
        assert status == 0 and out == (DOCS / "lint" / f"{code}.md").read_text().rstrip() + "\n"
    status, out, _err = run(capsys, "rule")
    assert status == 0 and len(out.strip().splitlines()) == len(LINT_CODES) + 2


def test_lint_text_links_each_finding_to_its_page(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _err = run(capsys, "lint", str(LINT_DATA / "shadowed.yaml"))
    findings = re.findall(r"\]: ", out)
    assert findings and len(re.findall(r"\n  rule: `visiongate rule [a-z-]+`", out)) == len(
        findings
    )


def test_lint_junit(capsys: pytest.CaptureFixture[str]) -> None:
    assert FORMATS == LINT_CLI_FORMATS
    argv = ["lint", str(LINT_DATA / "shadowed.yaml"), str(POLICIES / "default.yaml")]
    code, out, _err = run(capsys, *argv, "--format", "junit")
    root = ElementTree.fromstring(out)
    assert code == 1 and root.tag == "testsuites"
    suites = {suite.get("name"): suite for suite in root}
    shadowed = next(s for name, s in suites.items() if name and name.endswith("shadowed.yaml"))
    assert [f.get("type") for f in shadowed.iter("failure")] == ["shadowed"]
    default = next(s for name, s in suites.items() if name and name.endswith("default.yaml"))
    assert default.get("failures") == "0" and default.get("tests") == "1"
    assert root.get("failures") == "1"


def _failing_test_file(tmp_path: Path) -> Path:
    (tmp_path / "p.yaml").write_text((POLICIES / "default.yaml").read_text())
    target = tmp_path / "p.test.yaml"
    target.write_text(
        "policy: p.yaml\n"
        "cases:\n"
        "  - {name: text mode, facts: mode=text, expect: {lane: text, rule: text-mode}}\n"
        "  - {name: wrong lane, facts: mode=native path=accepts, expect: {lane: text}}\n"
        "  - {name: unknown rule, facts: mode=text, expect: {lane: text, rule: nope}}\n"
    )
    return target


def test_test_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "test", str(_failing_test_file(tmp_path)), "--format", "junit")
    root = ElementTree.fromstring(out)
    assert code == 1
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert set(cases) == {"text mode", "wrong lane", "unknown rule"}
    assert cases["text mode"].find("failure") is None
    assert cases["wrong lane"].find("failure") is not None
    assert cases["unknown rule"].find("error") is not None
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")


def test_the_quiet_default_prints_failures_and_a_summary_and_v_prints_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_file = str(_failing_test_file(tmp_path))
    _code, out, _err = run(capsys, "test", test_file)
    assert "PASS" not in out and "FAIL  wrong lane" in out and "ERROR unknown rule" in out
    assert out.strip().splitlines()[-1] == "1 passed, 1 failed, 1 error(s) in 1 file(s)"
    _code, out, _err = run(capsys, "test", test_file, "-v")
    assert "PASS  text mode" in out
    code, out, _err = run(capsys, "test", str(POLICIES))
    assert code == 0 and "PASS" not in out and "passed, 0 failed" in out


def test_test_run_selects_cases_by_regular_expression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test_file = str(_failing_test_file(tmp_path))
    code, out, _err = run(capsys, "test", test_file, "--run", "^text", "-v")
    assert code == 0 and "PASS  text mode" in out and "wrong lane" not in out
    assert "1 passed, 0 failed, 0 error(s) (cases matching `^text`" in out
    code, out, _err = run(capsys, "test", str(POLICIES), "--run", "golden|never", "--json")
    assert code == 0 and json.loads(out)["selected"] == "golden|never"
    code, out, err = run(capsys, "test", test_file, "--run", "no such case")
    assert (code, out) == (2, "") and "no test case matches `no such case`" in err


def test_docs_for_an_operators_own_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies").mkdir()
    mine = tmp_path / "policies" / "mine.yaml"
    mine.write_text((POLICIES / "examples" / "strict-routes.yaml").read_text())
    code, out, _err = run(capsys, "docs", "policies/mine.yaml", "--out", "site")
    assert code == 0 and "wrote site/mine.md" in out
    page = (tmp_path / "site" / "mine.md").read_text()
    assert "| File | `policies/mine.yaml` |" in page
    assert run(capsys, "docs", "policies/mine.yaml", "--out", "site", "--check")[0] == 0
    # The README's CI check, with no path and the default out folder, in this repository:
    assert run(capsys, "docs")[0] == 0
    code, out, _err = run(capsys, "docs", "--check")
    assert code == 0 and "1 policy page(s) up to date in policy_docs" in out
    mine.write_text(mine.read_text().replace('version: "1.0.0"', 'version: "1.0.1"', 1))
    code, out, _err = run(capsys, "docs", "--check")
    assert code == 1 and "stale: policy_docs/mine.md" in out


def test_docs_of_a_policy_that_does_not_load_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text((POLICIES / "default.yaml").read_text().replace("lane: native", "lane: x"))
    code, out, err = run(capsys, "docs", str(broken), "--out", str(tmp_path / "out"))
    assert (code, out) == (3, "") and "unknown lane `x`" in err
