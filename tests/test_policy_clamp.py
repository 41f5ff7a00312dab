"""A policy's `embed_target_bytes` outside 64 KiB-4 MiB: clamped to the nearest bound, as an
agent config's is, and said where the config's clamp is said (`clamped-setting`): in `lint`,
located, and in every decision record's `warnings`.

Regression: the policy's clamp was applied silently (the config's has been a warning since
issue 24), so a policy asking for 10-byte images sent 64 KiB ones and nothing said so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_helpers import FACTS, run

from visiongate.engine import Gate
from visiongate.engine.tooling.lint._check import lint_file

POLICY = """\
policy: clamped
version: "1"
description: native images for everything the route takes
hit_policy: unique
default: native
rules:
  - id: text-mode
    when: {mode: text}
    lane: text
    reason: the operator asked for text
execution:
  native:
    embed_target_bytes: 10
    sources:
      computer_use: {embed_target_bytes: 104857600}
"""
SMALL = "`10` is outside the byte budgets the native lane takes, clamped to the smallest, 65536"
LARGE = "`104857600` is outside the byte budgets the native lane takes, clamped to the largest"


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    path = tmp_path / "clamped.yaml"
    path.write_text(POLICY)
    return path


def test_lint_locates_each_clamped_budget(policy: Path) -> None:
    found = [d for d in lint_file(policy).diagnostics if d.code == "clamped-setting"]
    places = [(d.location.line, d.location.column, d.path_text, d.severity) for d in found]
    assert places == [
        (13, 25, "execution.native.embed_target_bytes", "warning"),
        (15, 42, "execution.native.sources.computer_use.embed_target_bytes", "warning"),
    ]


def test_the_clamped_value_is_the_one_applied(policy: Path) -> None:
    execution = Gate.load(str(policy)).compiled.policy.execution
    assert execution.native.embed_target_bytes == 65_536
    assert execution.native_for("computer_use").embed_target_bytes == 4_194_304


def test_every_record_carries_the_clamp_located(policy: Path) -> None:
    gate = Gate.load(str(policy), routes=False)
    records = [
        gate.decide("anthropic", "claude-sonnet-4-5").record(),
        gate.decide("openrouter", "my-team/alias").record(),
        gate.decide_facts("auto", "vision", "unset", "accepts").record(),
    ]
    for record in records:
        assert any(w.startswith(f"{policy}:13:25: {SMALL}") for w in record["warnings"])
        assert any(w.startswith(f"{policy}:15:42: {LARGE}") for w in record["warnings"])


def test_a_policy_within_range_adds_no_warning() -> None:
    record = Gate.load(routes=False).decide("anthropic", "claude-sonnet-4-5").record()
    assert not any("byte budgets" in warning for warning in record["warnings"])


@pytest.mark.parametrize("form", ["text", "json"])
def test_decide_says_it(form: str, policy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["decide", "--facts", FACTS, "--policy", str(policy)]
    code, out, err = run(capsys, *argv, *(["--json"] if form == "json" else []))
    assert code == 0
    warnings = json.loads(out)["warnings"] if form == "json" else err.splitlines()
    assert any(SMALL in warning for warning in warnings), (out, err)
