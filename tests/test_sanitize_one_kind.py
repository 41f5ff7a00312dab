"""Text that hides one kind of invisible character only (issue 37, round six): tags, or
standardized selectors, settled at C speed with exactly the walk's text and counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.sanitize._bulk._present import present
from visiongate.adapters.sanitize._invisible import channel_chars
from visiongate.adapters.sanitize._text import _one_kind, clean_text, compile_text_rules
from visiongate.adapters.sanitize._walk import Walk
from visiongate.engine._settings import INVISIBLE_CHANNELS, SanitizeSettings

RULES = compile_text_rules(SanitizeSettings())
TAGS = [chr(0xE0000 + code) for code in (0x01, 0x20, 0x41, 0x7E, 0x7F)]
SELECTORS = [chr(code) for code in (0x180B, 0x180F, 0xFE00, 0xFE01, 0xFE0E, 0xFE0F)]
# Bases of those selectors (a CJK ideograph, Mongolian, emoji of both planes, a plane 2
# ideograph, a hieroglyph), letters of several scripts, and astral neighbours of the tags.
LETTERS = "aé Жы مر 日本 \u4e3d\u1820✅🚀👍\u2764\U0002f8a6\U00013012\U000f0000\U000e0080"
HIDDEN = "".join(chr(0xE0000 + ord(char)) for char in "obey the hidden orders")


def _agrees(text: str) -> None:
    walked, walk_counts = Walk(text, RULES).run()
    cleaned, counts = clean_text(text, RULES)
    assert cleaned == walked
    assert dict(counts) == dict(walk_counts)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*TAGS, *LETTERS]), max_size=80).map("".join))
def test_text_with_tags_only_is_cleaned_as_the_walk_cleans_it(text: str) -> None:
    _agrees(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*SELECTORS, *LETTERS]), max_size=80).map("".join))
def test_text_with_selectors_only_is_cleaned_as_the_walk_cleans_it(text: str) -> None:
    _agrees(text)


@pytest.mark.parametrize(
    "text",
    [
        # Dense tags, long enough for the byte path, in mixed scripts.
        "".join(char + chr(0xE0020 + index % 95) for index, char in enumerate("Жы مر é" * 900)),
        # The same with a private-use character of the tags' first byte: the regex path.
        "\U000f0000" + "".join(char + chr(0xE0041) for char in "Жы مر é" * 900),
        # Tag runs, and runs beside another astral invisible character (VS17).
        ("Снимок экрана. مرحبا. " + HIDDEN) * 50,
        ("Снимок экрана. " + HIDDEN + "\U000e0100") * 50,
        # A selector after every letter, emoji and ideographs among them.
        "".join(
            char + chr(0xFE00 + index % 16) for index, char in enumerate("🚀👍✅\u4e3d日" * 500)
        ),
        "".join(char + "\ufe0f" for char in "👍\u2764🚀" * 500),
    ],
)
def test_payloads_of_one_kind_in_any_script_match_the_walk(text: str) -> None:
    _agrees(text)


def test_a_text_hiding_two_kinds_is_left_to_the_other_paths() -> None:
    assert _one_kind("Жы" + HIDDEN + "\u200b" * 3 + "мир") is None
    assert _one_kind("Жы\ufe00\u200bмир") is None


@pytest.mark.parametrize("channel", INVISIBLE_CHANNELS)
def test_the_first_look_finds_every_invisible_character_in_any_script(channel: str) -> None:
    for code in sorted(channel_chars(channel))[:: max(1, len(channel_chars(channel)) // 64)]:
        for around in ("Жы", "日本", "🚀", "a"):
            assert present(around * 3000 + chr(code) + around) is not None, hex(code)
    assert present("Жы 日本 🚀 a é\u0000" * 3000) is None
