"""A misspelt key that routes images fails closed; one that only tunes stays a warning (issue 35).

Regression: `agnet:` or `agent.image_input_mod:` was a warning, and the lane native: a
misspelt value failed closed while a misspelt key opened the gate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_helpers import run

from visiongate.engine import Gate

TARGET = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")

ROUTING_TYPOS = [
    pytest.param("agnet:\n  image_input_mode: text\n", "agnet", id="agent"),
    pytest.param("agent:\n  image_input_mod: text\n", "image_input_mod", id="image_input_mode"),
    pytest.param("auxiliary:\n  vison: {provider: openrouter}\n", "vison", id="auxiliary.vision"),
    pytest.param(
        "auxiliary:\n  vision: {provder: openrouter}\n", "provder", id="auxiliary.vision.provider"
    ),
    pytest.param("model:\n  supports_vison: false\n", "supports_vison", id="model.supports_vision"),
    pytest.param(
        "model_overides:\n  claude-sonnet-4-5: {supports_vision: false}\n",
        "model_overides",
        id="model_overrides",
    ),
    pytest.param(
        "providers:\n  anthropic:\n    models:\n      claude-sonnet-4-5: {supports_vison: false}\n",
        "supports_vison",
        id="providers.models.supports_vision",
    ),
]


@pytest.mark.parametrize(("text", "key"), ROUTING_TYPOS)
def test_a_misspelt_routing_key_fails_closed_to_text(tmp_path: Path, text: str, key: str) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(text)
    decision = Gate.load(config=config, routes=False).decide(*TARGET[1::2])
    assert decision.lane == "text" and decision.facts["mode"] == "text"
    assert "misspelt key" in decision.provenance["mode"]
    assert "failing closed" in decision.provenance["mode"]
    errors = Gate.load(config=config, routes=False).resolver.config.errors
    assert [error.code for error in errors] == ["misspelt-routing-key"]
    assert f"`{key}`" in errors[0].message and errors[0].help.startswith("did you mean")


def test_decide_exits_3_on_a_misspelt_key_and_says_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agnet:\n  image_input_mode: text\n")
    code, out, err = run(capsys, "decide", *TARGET, "--config", str(config))
    assert code == 3 and "lane:    text" in out
    assert (
        "agent.yaml:1:1: error[misspelt-routing-key]: unknown key `agnet` at the top level "
        "looks like `agent`, which routes images: failing closed to `text`" in err
    )
    assert "did you mean `agent`?" in err


def test_a_misspelt_tuning_key_stays_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "vision:\n  embed_taget_bytes: 100000\nauxiliary:\n  vision: {timout: 3}\n"
        "notes: {agnet: 1}\n"
    )
    decision = Gate.load(config=config, routes=False).decide(*TARGET[1::2])
    assert decision.lane == "native" and decision.facts["mode"] == "auto"
    code, _out, err = run(capsys, "decide", *TARGET, "--config", str(config))
    assert code == 0
    assert "warning[unknown-config-key]" in err or "unknown key `embed_taget_bytes`" in err
    assert "misspelt-routing-key" not in err
    assert "agnet" not in err  # a section visiongate does not read is left alone


def test_lint_config_reports_both_with_their_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mod: text\nvision:\n  embed_taget_bytes: 1\n")
    code, out, _err = run(capsys, "lint", "--config", str(config))
    assert code == 3
    assert ":2:3: error[misspelt-routing-key]: unknown key `image_input_mod`" in out
    assert ":4:3: warning[unknown-config-key]: unknown key `embed_taget_bytes`" in out
    code, out, _err = run(capsys, "rule", "misspelt-routing-key")
    assert code == 0 and "misspelt-routing-key" in out


def test_a_key_the_production_agent_reads_and_visiongate_does_not_is_named_once(
    tmp_path: Path,
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("vision:\n  max_calls_per_image: 3\n  embed_target_bytes: 200000\n")
    found = Gate.load(config=config, routes=False).resolver.config.diagnostics
    ignored = [d for d in found if d.code == "ignored-config-key"]
    assert len(ignored) == 1 and "`vision.max_calls_per_image` is not read" in ignored[0].message
    assert ignored[0].severity == "warning"


def test_the_readme_shows_the_lines_decide_and_lint_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from _doc_blocks import operator_lines

    monkeypatch.chdir(tmp_path)
    Path("agent.yaml").write_text("agent:\n  image_input_mod: text\n")
    said = ""
    for argv in (
        ["decide", "--config", "agent.yaml", *TARGET],
        ["decide", "--provider", "openruter", "--model", "anthropic/claude-sonnet-4.5"],
        ["lint", "--config", "agent.yaml"],
    ):
        _code, out, err = run(capsys, *argv)
        said += out + err
    shown = [line for line in operator_lines() if not line.startswith("visiongate proxy")]
    assert len(shown) == 6  # decide's finding with its help and its warning, lint's with its rule
    for line in shown:
        assert line in said.splitlines(), line
