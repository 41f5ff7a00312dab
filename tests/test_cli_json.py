"""Every `--json` output is one document with a `schema_version`, valid against the JSON
Schema the package ships for it; real outputs, not samples (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli_helpers import FACTS, POLICIES, TARGET, json_output, run, validate_output
from _warm import server_command

from visiongate._schemas import SCHEMA_VERSIONS, load_schema
from visiongate.adapters.mcp.example_server import screenshot_png
from visiongate.engine.facts._routes import LearnedRoute, RouteOverlay

LINT_DATA = Path(__file__).parent / "data" / "lint"


def _document(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv)
    assert code in (0, 1), err
    return json_output(out)


def test_every_schema_ships_in_the_package_and_is_a_valid_schema() -> None:
    from jsonschema import Draft202012Validator

    for name in SCHEMA_VERSIONS:
        schema = load_schema(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"urn:visiongate:schema:{name}"
        assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSIONS[name]}


def test_the_decision_record_schema_version_is_the_engines() -> None:
    from visiongate.engine._decision import SCHEMA_VERSION

    assert SCHEMA_VERSIONS["decision-record"] == SCHEMA_VERSION


@pytest.mark.parametrize("extra", [[], ["--explain"]])
def test_decide_json(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    validate_output(
        "decision-record", _document(capsys, "decide", "--facts", FACTS, "--json", *extra)
    )
    resolved = _document(capsys, "decide", *TARGET, "--json", *extra)
    validate_output("decision-record", resolved)
    assert resolved["provider"] == "anthropic"


def test_explain_json_names_the_policy_and_its_sha(capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(capsys, "explain", "--json", "--policy", "examples/strict-routes")
    validate_output("explain", document)
    assert document["policy"]["name"] == "strict-routes"


def test_diff_json(capsys: pytest.CaptureFixture[str]) -> None:
    validate_output(
        "diff", _document(capsys, "diff", "default", "examples/strict-routes", "--json")
    )


@pytest.mark.parametrize("fixture", ["shadowed.yaml", "redundant.yaml", "unused-ignore.yaml"])
def test_lint_json(fixture: str, capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(capsys, "lint", str(LINT_DATA / fixture), "--format", "json")
    validate_output("lint-report", document)
    assert document["files"][0]["diagnostics"] or document["files"][0]["suppressed"]


def test_test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    validate_output("test-report", _document(capsys, "test", str(POLICIES), "--json"))
    (tmp_path / "p.yaml").write_text((POLICIES / "default.yaml").read_text())
    failing = tmp_path / "p.test.yaml"
    failing.write_text(
        "policy: p.yaml\ncases:\n  - {facts: mode=text, expect: {lane: native}}\n"
        "  - {facts: mode=auto, expect: {lane: text, rule: nope}}\n"
    )
    document = _document(capsys, "test", str(failing), "--json", "--min-coverage", "100")
    validate_output("test-report", document)
    assert document["summary"] == {"pass": 0, "fail": 1, "error": 1}


def test_route_json_with_and_without_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "screen.png"
    image.write_bytes(screenshot_png())
    argv = ["route", "--source", "browser", "--image", str(image), *TARGET]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    plain = _document(capsys, *argv)
    validate_output("route-output", plain)
    payload_file = tmp_path / "payload.json"
    with_out = _document(capsys, *argv, "--out", str(payload_file))
    validate_output("route-output", with_out)
    assert set(with_out) == {"schema_version", "payload", "payload_file", "record"}
    assert json.loads(payload_file.read_text()) == with_out["payload"]


def test_mcp_call_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["mcp", "call", *TARGET, "--tool", "screenshot", "--cache-dir", str(tmp_path)]
    validate_output("route-output", _document(capsys, *argv, "--", *server_command()))


def test_registry_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    validate_output("registry-show", _document(capsys, "registry", "show", "openrouter", "--json"))
    route = _document(capsys, "registry", "show", "anthropic", "claude-sonnet-4-5", "--json")
    validate_output("registry-show", route)


def test_routes_list_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    routes = tmp_path / "routes.json"
    RouteOverlay(routes).record(
        LearnedRoute.today("openrouter", "x/y", "refuses", "learned", "400")
    )
    document = _document(capsys, "routes", "list", "--routes", str(routes), "--json")
    validate_output("routes-list", document)
    assert document["routes"][0]["model"] == "x/y"


@pytest.mark.parametrize("argv", [["rule", "gap", "--json"], ["rule", "--json"]])
def test_rule_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    validate_output("rule", _document(capsys, *argv))


def test_version_json(capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(capsys, "version", "--json")
    validate_output("version", document)
    assert document["json_outputs"] == SCHEMA_VERSIONS


def test_audit_json_follows_its_schema_with_and_without_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from visiongate.engine import Gate

    trace = tmp_path / "decisions.jsonl"
    gate = Gate.load(trace=trace, routes=False)
    for provider, model in (("anthropic", "claude-sonnet-4-5"), ("openrouter", "x/unknown")):
        gate.decide(provider, model)
    with trace.open("a") as stream:
        stream.write("not json\n")  # a finding: the summary must still follow its schema
    summary = _document(capsys, "audit", str(trace), "--json")
    validate_output("audit", summary)
    assert summary["decisions"] == 2 and summary["malformed"]["count"] == 1
    grouped = _document(capsys, "audit", str(trace), "--format", "json", "--group-by", "lane,day")
    validate_output("audit", grouped)
    assert sum(group["decisions"] for group in grouped["groups"]) == 2
