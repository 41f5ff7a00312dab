"""Text cleaning: the YAML table, plus edges YAML cannot spell (lone surrogates, bad settings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.sanitize._text import tag_sequence
from visiongate.engine._settings import INVISIBLE_CHANNELS, SanitizeSettings
from visiongate.engine.tooling._channels import CHANNEL_NOTES

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "sanitize" / "text.yaml").read_text(encoding="utf-8")
)


def _settings(overrides: dict[str, Any] | None) -> SanitizeSettings:
    overrides = dict(overrides or {})
    if "allowed_flag_tags" in overrides:
        overrides["allowed_flag_tags"] = tuple(overrides["allowed_flag_tags"])
    return SanitizeSettings(**overrides)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_text_table(case: dict[str, Any]) -> None:
    sanitizer = Sanitizer(_settings(case.get("settings")))
    text = case["input"]
    cleaned = sanitizer.text(text, "text")
    if "want" in case:
        assert cleaned == case["want"]
    else:
        assert cleaned is text
    assert sanitizer.counts().get("text", {}) == case["counts"]


def test_table_names_are_unique() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))


def test_lone_surrogate_is_not_mistaken_for_a_tag() -> None:
    # U+DB40 alone encodes like the first half of a tag character in UTF-16.
    text = "\udb40abc \U0001f600"
    assert Sanitizer().text(text, "text") is text


def test_lone_surrogate_next_to_a_tag() -> None:
    assert Sanitizer().text("\udb40\U000e0041x", "text") == "\udb40x"


def test_tag_found_after_a_misaligned_surrogate_match() -> None:
    # U+4000 then U+00DB yields the bytes 40 DB at an odd offset: a false alarm, then a real tag.
    assert Sanitizer().text("\u4000\u00db\U0001f600\U000e0041", "text") == "\u4000\u00db\U0001f600"


def test_counts_are_per_surface_and_accumulate() -> None:
    sanitizer = Sanitizer()
    sanitizer.text("a\U000e0041", "text")
    sanitizer.text("b\U000e0041\U000e0042", "text")
    sanitizer.text("c\U000e0041", "error")
    assert sanitizer.counts() == {"text": {"tag_chars": 3}, "error": {"tag_chars": 1}}


def test_counts_are_a_fresh_copy() -> None:
    sanitizer = Sanitizer()
    sanitizer.text("a\U000e0041", "text")
    sanitizer.counts()["text"]["tag_chars"] = 99
    assert sanitizer.counts() == {"text": {"tag_chars": 1}}


def test_clean_text_leaves_no_surface_in_counts() -> None:
    sanitizer = Sanitizer()
    sanitizer.text("all clean ’", "text")
    assert sanitizer.counts() == {}


def test_default_settings_are_the_policy_defaults() -> None:
    assert Sanitizer().settings == SanitizeSettings()


@pytest.mark.parametrize("tag", ["", "gb\u00e9ng", "gb\neng"])
def test_allowed_flag_tag_must_be_printable_ascii(tag: str) -> None:
    with pytest.raises(ValueError, match="is not printable ascii"):
        Sanitizer(SanitizeSettings(allowed_flag_tags=(tag,)))


def test_tag_sequence_spells_the_flag() -> None:
    assert "\U0001f3f4" + tag_sequence("gbeng") == "🏴󠁧󠁢󠁥󠁮󠁧󠁿"


def test_flag_channel_keeps_counts_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    sanitizer = Sanitizer(SanitizeSettings(variation_selectors="flag"))
    hidden = "ok\U0001f600" + "\ufe01\U000e0150\U000e0160"
    with caplog.at_level("WARNING", logger="visiongate.sanitize"):
        assert sanitizer.text(hidden, "text") is hidden
        assert sanitizer.text(hidden, "text") is hidden
    assert sanitizer.counts() == {"text": {"variation_selectors_flagged": 6}}
    warnings = [r.getMessage() for r in caplog.records if r.name == "visiongate.sanitize"]
    assert len(warnings) == 1
    assert "3 variation selectors" in warnings[0]
    assert "`sanitize.invisible.variation_selectors` is `flag`" in warnings[0]


@pytest.mark.parametrize("channel", INVISIBLE_CHANNELS)
def test_the_docs_examples_are_what_the_sanitizer_does(channel: str) -> None:
    note = CHANNEL_NOTES[channel]
    assert Sanitizer().text(note.payload, "text") == note.stripped != note.payload
    assert Sanitizer().text(note.kept, "text") is note.kept
    kept_here = Sanitizer(SanitizeSettings(**{channel: "strip"}))
    kept_here.text(note.kept, "text")
    assert any(
        kind.startswith(channel) or kind == "flags_kept" for kind in kept_here.counts()["text"]
    )
