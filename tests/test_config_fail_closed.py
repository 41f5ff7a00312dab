"""Config mistakes fail closed and every command says so alike (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_helpers import run

from visiongate.engine import Gate

TARGET = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")


def test_an_empty_image_input_mode_fails_closed_to_text(tmp_path: Path) -> None:
    """Regression: `image_input_mode: ''` resolved to `auto`, and so to native pixels."""
    config = tmp_path / "agent.yaml"
    config.write_text('agent:\n  image_input_mode: ""\n')
    decision = Gate.load(config=config, routes=False).decide(*TARGET[1::2])
    assert decision.facts["mode"] == "text" and decision.lane == "text"
    assert "failing closed" in decision.provenance["mode"]
    missing = tmp_path / "missing-key.yaml"
    missing.write_text("agent: {}\n")
    assert Gate.load(config=missing, routes=False).decide(*TARGET[1::2]).facts["mode"] == "auto"


def test_decide_and_lint_agree_on_a_config_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: `decide --config` exited 2 and `lint --config` 3 on the same file."""
    config = tmp_path / "agent.yaml"
    config.write_bytes(b"agent:\n  image_input_mode: caf\xe9\n")
    decided, _, said = run(capsys, "decide", *TARGET, "--config", str(config))
    linted, _, _ = run(capsys, "lint", "--config", str(config))
    assert decided == linted == 3
    assert "not UTF-8 text" in said
    missing, _, _ = run(capsys, "decide", *TARGET, "--config", str(tmp_path / "none.yaml"))
    assert missing == 2  # a file that is not there is a usage error, as before
