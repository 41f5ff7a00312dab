"""The `sanitize.invisible` section: six modes, the old booleans mapped, typos caught."""

from __future__ import annotations

import pytest

from visiongate.engine._load import compile_policy_text
from visiongate.engine._settings import INVISIBLE_CHANNELS, SanitizeSettings
from visiongate.engine.tooling.lint._check import lint_text

HEAD = """policy: sanitize-modes
version: "1"
description: every text the model reads, cleaned
hit_policy: unique
default: text
rules:
  - id: everything-text
    lane: text
    reason: pixels never enter the conversation
"""


def _settings(section: str) -> SanitizeSettings:
    return compile_policy_text(HEAD + section, "policy.yaml").policy.sanitize


def test_every_channel_strips_by_default() -> None:
    settings = _settings("")
    assert all(settings.mode(channel) == "strip" for channel in INVISIBLE_CHANNELS)
    assert settings == SanitizeSettings()


def test_modes_are_read_per_channel() -> None:
    settings = _settings("sanitize:\n  invisible:\n    tags: flag\n    fillers: keep\n")
    assert (settings.tags, settings.fillers, settings.bidi) == ("flag", "keep", "strip")


@pytest.mark.parametrize(("written", "mode"), [("true", "strip"), ("false", "keep")])
def test_the_old_booleans_keep_their_meaning_and_lint_says_so(written: str, mode: str) -> None:
    section = f"sanitize:\n  invisible:\n    bidi: {written}\n    zero_width: {written}\n"
    settings = _settings(section)
    assert settings.bidi == settings.zero_width == mode
    found = [d for d in lint_text(HEAD + section, "policy.yaml").diagnostics]
    deprecated = [d for d in found if d.code == "deprecated-setting"]
    assert [(d.location.line, d.severity) for d in deprecated] == [(12, "warning"), (13, "warning")]
    assert f"write `bidi: {mode}`" in (deprecated[0].help or "")


def test_a_boolean_is_not_a_mode_for_the_new_channels() -> None:
    found = lint_text(HEAD + "sanitize:\n  invisible:\n    tags: false\n", "p.yaml").diagnostics
    assert [d.code for d in found if d.severity == "error"] == ["bad-type"]


@pytest.mark.parametrize(
    ("section", "code", "hint"),
    [
        ("sanitize:\n  invisible:\n    zero_widht: strip\n", "unknown-key", "`zero_width`"),
        ("sanitize:\n  invisible:\n    variation_selectors: stirp\n", "unknown-value", "`strip`"),
    ],
)
def test_typos_are_located_with_a_suggestion(section: str, code: str, hint: str) -> None:
    found = [d for d in lint_text(HEAD + section, "p.yaml").diagnostics if d.code == code]
    assert found and found[0].location.line == 12 and hint in (found[0].help or "")
