"""Agent config mistakes a newcomer meets (issue 28): the near miss `decide --facts` left out,
and a literal `api_key` that passed lint but kept the vision backend from starting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from _cli_helpers import FACTS, run

from visiongate.adapters.vision import backend_from_config
from visiongate.adapters.vision._base import VisionConfigError
from visiongate.engine.tooling.lint._check import lint_config

NEAR_MISS = "vision:\n  embed_taget_bytes: 400000\n"


@pytest.mark.parametrize("form", ["text", "json"])
def test_decide_with_facts_and_a_config_carries_its_near_miss_warning(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(NEAR_MISS)
    argv = ["decide", "--facts", FACTS, "--config", str(config)]
    code, out, err = run(capsys, *argv, *(["--json"] if form == "json" else []))
    assert code == 0
    # JSON carries it in the document; the text form says it on standard error.
    warnings = json.loads(out)["warnings"] if form == "json" else err.splitlines()
    assert any("`embed_taget_bytes`" in w and "`embed_target_bytes`" in w for w in warnings), out


# `auxiliary.vision` as written -> whether the backend refuses its key as a literal one.
API_KEYS: dict[str, tuple[dict[str, str], bool]] = {
    "a pasted key": ({"api_key": "sk-or-v1-0123456789abcdef"}, True),
    "a bare variable name": ({"api_key": "OPENROUTER_API_KEY"}, True),
    "a number (not read)": ({"api_key": 12345}, False),  # type: ignore[dict-item]
    "${VAR}": ({"api_key": "${OPENROUTER_API_KEY}"}, False),
    "$VAR": ({"api_key": "$OPENROUTER_API_KEY"}, False),
    "api_key_env instead": ({"api_key_env": "OPENROUTER_API_KEY"}, False),
    "api_key_env wins over api_key": (
        {"api_key_env": "OPENROUTER_API_KEY", "api_key": "sk-literal"},
        False,
    ),
    "no key at all": ({}, False),
}


@pytest.mark.parametrize(("keys", "literal"), API_KEYS.values(), ids=API_KEYS)
def test_lint_flags_a_literal_api_key_exactly_when_the_backend_refuses_it(
    keys: dict[str, str], literal: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-from-the-environment")
    data = {
        "auxiliary": {
            "vision": {"provider": "openrouter", "model": "google/gemini-2.5-flash", **keys}
        }
    }
    try:
        backend_from_config(data)
        refused = False
    except VisionConfigError as error:
        refused = error.code == "vision_inline_api_key"
    assert refused == literal  # the backend's verdict, which lint must tell in advance
    config = tmp_path / "agent.yaml"
    config.write_text(yaml.safe_dump(data))
    found = [d for d in lint_config(config).diagnostics if d.code == "literal-api-key"]
    assert bool(found) == literal
    for diagnostic in found:
        assert diagnostic.severity == "error" and "api_key_env" in diagnostic.help
        assert "sk-" not in diagnostic.render()  # the key is never echoed


def test_lint_and_decide_exit_3_on_a_literal_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("auxiliary:\n  vision:\n    provider: openrouter\n    api_key: sk-secret\n")
    code, out, _err = run(capsys, "lint", "--config", str(config))
    assert code == 3 and "error[literal-api-key]" in out and "sk-secret" not in out
    code, _out, err = run(capsys, "decide", "--facts", FACTS, "--config", str(config))
    assert code == 3 and "literal-api-key" in err and "sk-secret" not in err


VISION_CASES = [
    case
    for case in yaml.safe_load(
        (Path(__file__).parent / "data" / "vision_config_cases.yaml").read_text()
    )
    if "want_error" in case
    and "main" not in case  # the main model's provider is a run-time input, not the file's
    and case["want_error"]["code"] not in ("vision_inline_api_key", "vision_main_unresolved")
]


@pytest.mark.parametrize("case", VISION_CASES, ids=[case["name"] for case in VISION_CASES])
def test_lint_config_refuses_what_the_vision_backend_refuses(
    case: dict[str, Any], tmp_path: Path
) -> None:
    """Regression (issue 36): `lint --config` passed `auxiliary.vision.timeout: .nan` (and every
    other value the backend refuses), and every backend call was then refused at run time.
    Each case of the backend's own table (`vision_config_cases.yaml`) is an error of lint's,
    at the key the backend names, with its line."""
    config = tmp_path / "agent.yaml"
    config.write_text(case["config"])
    [found] = [d for d in lint_config(config).diagnostics if d.code == "invalid-vision-setting"]
    assert found.severity == "error" and "will not start" in found.message
    assert ".".join(map(str, found.document_path)) == case["want_error"]["path"]
    assert found.location.file.endswith("agent.yaml") and found.location.column >= 1
    last = case["want_error"]["path"].rsplit(".", 1)[-1]
    lines = [n for n, line in enumerate(case["config"].splitlines(), 1) if f"{last}:" in line]
    if lines:  # the key is written: the finding is on its line
        assert found.location.line == lines[0], (found.location, case["config"])


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "abc", "-3", "0", "601", "true"])
def test_lint_and_decide_exit_3_on_a_vision_timeout_the_backend_refuses(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "auxiliary:\n  vision:\n    provider: openrouter\n    model: google/gemini-2.5-flash\n"
        f"    timeout: {value}\n"
    )
    code, out, _err = run(capsys, "lint", "--config", str(config))
    (finding,) = [line for line in out.splitlines() if "error[invalid-vision-setting]" in line]
    assert code == 3 and finding.startswith(f"{config}:5:14: error[invalid-vision-setting]: ")
    assert "`auxiliary.vision.timeout`" in finding, out
    code, _out, err = run(capsys, "decide", "--facts", FACTS, "--config", str(config))
    assert code == 3 and "agent.yaml:5:14" in err and "invalid-vision-setting" in err
    config.write_text(config.read_text().replace(f"timeout: {value}", "timeout: 30"))
    assert run(capsys, "lint", "--config", str(config))[0] == 0


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_lint_config_finds_a_routes_file_that_is_no_regular_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 36, item 15): `decide` refused `visiongate.routes_file: <a folder>`
    in one located line, but `lint --config` passed the same config (exit 0). A missing file
    is still fine: no route is learned yet."""
    import os

    named = tmp_path / "routes"
    if kind == "directory":
        named.mkdir()
    else:
        os.mkfifo(named)
    config = tmp_path / "agent.yaml"
    config.write_text(f"model: claude-sonnet-4-5\nvisiongate:\n  routes_file: {named}\n")
    code, out, _err = run(capsys, "lint", "--config", str(config))
    (finding,) = [line for line in out.splitlines() if "error[unreadable-file]" in line]
    assert code == 3 and finding.startswith(f"{config}:3:16: error[unreadable-file]: ")
    config.write_text(f"model: claude-sonnet-4-5\nvisiongate:\n  routes_file: {named}.json\n")
    code, out, _err = run(capsys, "lint", "--config", str(config))
    assert code == 0 and "unreadable-file" not in out


def test_every_bad_vision_value_is_said_once_by_lint_and_by_decide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: three bad values under `auxiliary.vision` gave one finding (the first the
    backend's check raised), and `decide` printed each config error twice (the record's copy,
    then the located one). Each is now said once, located, with its code; a provider typo gets
    a did-you-mean."""
    config = tmp_path / "agent.yaml"
    config.write_text(
        "auxiliary:\n  vision:\n    provider: opnerouter\n    model: 12\n    timeout: -3\n"
        "    max_retries: many\n"
    )
    code, out, _err = run(capsys, "lint", "--config", str(config))
    found = sorted(
        line.split(": error[invalid-vision-setting]: ")[0].rsplit(":", 2)[-2]
        for line in out.splitlines()
        if "error[invalid-vision-setting]" in line
    )
    assert code == 3 and found == ["3", "4", "5", "6"], out
    assert "did you mean `openrouter`?" in out, out
    code, _out, err = run(capsys, "decide", "--facts", FACTS, "--config", str(config))
    errors = [line for line in err.splitlines() if "error" in line]
    assert code == 3 and len(errors) == 4 and len(set(errors)) == 4, err
    assert all("error[invalid-vision-setting]" in line for line in errors), err


def test_the_aux_fact_says_when_the_configured_backend_will_not_start(tmp_path: Path) -> None:
    """`aux` stays `set` (the operator asked for a backend; auto mode then keeps pixels out),
    but its provenance no longer reads as a working backend when its settings hold errors."""
    from visiongate.engine import Gate

    config = tmp_path / "agent.yaml"
    config.write_text(
        "auxiliary:\n  vision:\n    provider: openrouter\n    model: google/gemini-2.5-flash\n"
        "    timeout: -3\n"
    )
    decision = Gate.load(config=config, routes=False).decide("anthropic", "claude-sonnet-4-5")
    assert decision.facts["aux"] == "set"
    assert "1 error(s) in its settings: the backend will not start" in decision.provenance["aux"]
    config.write_text(config.read_text().replace("timeout: -3", "timeout: 30"))
    decision = Gate.load(config=config, routes=False).decide("anthropic", "claude-sonnet-4-5")
    assert "will not start" not in decision.provenance["aux"]
