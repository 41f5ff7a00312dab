"""Properties of the cleaner, over text built from the pieces attacks and real text are made of."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.sanitize._invisible import channel_chars, emoji_zwj_sequences
from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.sanitize._text import BLACK_FLAG, CANCEL_TAG, REMOVED_KIND, tag_sequence
from visiongate.engine._settings import INVISIBLE_CHANNELS, SanitizeSettings

EXAMPLES = settings(max_examples=300, deadline=None)

TAG_RANGE = "\U000e0000-\U000e007f"
ANY_TAG = re.compile(f"[{TAG_RANGE}]")

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
OTHERS = "\u3164\uffa0\u115f\u1160\u00ad\u034f\u180e\ufe00\ufe0e\U000e0100\U000e01ef\U000e0080"
INVISIBLE = {channel: frozenset(map(chr, channel_chars(channel))) for channel in INVISIBLE_CHANNELS}
SETTINGS = st.sampled_from(
    [
        SanitizeSettings(),
        SanitizeSettings(allowed_flag_tags=("usca", "gbeng", "gb")),
        SanitizeSettings(allowed_flag_tags=()),
        SanitizeSettings(bidi="keep", zero_width="flag"),
        SanitizeSettings(**dict.fromkeys(INVISIBLE_CHANNELS, "flag")),
        SanitizeSettings(tags="keep", variation_selectors="keep", fillers="flag"),
        SanitizeSettings(**{**dict.fromkeys(INVISIBLE_CHANNELS, "keep"), "tags": "strip"}),
        SanitizeSettings(**dict.fromkeys(INVISIBLE_CHANNELS, "keep")),
    ]
)

FRAGMENTS = st.sampled_from(
    [
        BLACK_FLAG,
        CANCEL_TAG,
        tag_sequence("gbeng"),
        tag_sequence("gbsct"),
        tag_sequence("gbwls"),
        tag_sequence("usca"),
        tag_sequence("gb"),
        tag_sequence("ignore"),
        *BIDI_CONTROLS,
        *ZERO_WIDTH,
        *OTHERS,
        "\ufe0f",
        "\u845b",
        "\u05e9",
        "#",
        "\U0001f468",
        "\U0001f3fd",
        "\U0001f308",
        "\u2194",
        "\u06cc",
        "\u062e",
        "\u0915",
        "\u094d",
        "a",
        " ",
        "\udb40",
        "\u4000\u00db",
    ]
)
TEXT = st.lists(
    st.one_of(
        FRAGMENTS,
        st.characters(min_codepoint=0xE0000, max_codepoint=0xE007F),
        st.characters(),
    ),
    max_size=40,
).map("".join)


def _outside_allowed_flags(text: str, allowed: tuple[str, ...]) -> str:
    if not allowed:
        return text
    flags = "|".join(re.escape(BLACK_FLAG + tag_sequence(tag)) for tag in allowed)
    return re.sub(flags, "", text)


def _is_subsequence(small: str, big: str) -> bool:
    remaining = iter(big)
    return all(char in remaining for char in small)


def _outside_sequences(text: str, policy: SanitizeSettings) -> str:
    """`text` without its allowed flags and RGI emoji ZWJ sequences."""
    for sequence in sorted(emoji_zwj_sequences(), key=len, reverse=True):
        if sequence in text:
            text = text.replace(sequence, " ")
    return _outside_allowed_flags(text, policy.allowed_flag_tags)


@EXAMPLES
@given(TEXT, SETTINGS)
def test_no_tag_survives_outside_an_allowed_flag(text: str, policy: SanitizeSettings) -> None:
    cleaned = Sanitizer(policy).text(text, "text")
    if policy.tags == "strip":
        assert not ANY_TAG.search(_outside_allowed_flags(cleaned, policy.allowed_flag_tags))


@EXAMPLES
@given(TEXT, SETTINGS)
def test_no_run_of_stripped_characters_survives(text: str, policy: SanitizeSettings) -> None:
    # Each legitimate use is one character in context; a run is a payload, whatever it says.
    stripped = frozenset().union(
        *(INVISIBLE[channel] for channel in INVISIBLE_CHANNELS if policy.mode(channel) == "strip")
    )
    rest = _outside_sequences(Sanitizer(policy).text(text, "text"), policy)
    assert not any(a in stripped and b in stripped for a, b in pairwise(rest))


@EXAMPLES
@given(TEXT, SETTINGS)
def test_keep_and_flag_channels_lose_nothing(text: str, policy: SanitizeSettings) -> None:
    cleaned = Sanitizer(policy).text(text, "text")
    for channel in INVISIBLE_CHANNELS:
        if policy.mode(channel) != "strip":
            chars = INVISIBLE[channel]
            assert [c for c in cleaned if c in chars] == [c for c in text if c in chars]


@EXAMPLES
@given(TEXT, SETTINGS)
def test_idempotent(text: str, policy: SanitizeSettings) -> None:
    once = Sanitizer(policy).text(text, "text")
    assert Sanitizer(policy).text(once, "text") is once


@EXAMPLES
@given(TEXT, SETTINGS)
def test_only_removes(text: str, policy: SanitizeSettings) -> None:
    assert _is_subsequence(Sanitizer(policy).text(text, "text"), text)


@EXAMPLES
@given(TEXT, SETTINGS)
def test_counts_are_what_went_missing(text: str, policy: SanitizeSettings) -> None:
    sanitizer = Sanitizer(policy)
    cleaned = sanitizer.text(text, "text")
    counts = sanitizer.counts().get("text", {})
    for channel in INVISIBLE_CHANNELS:
        chars = INVISIBLE[channel]
        removed = sum(c in chars for c in text) - sum(c in chars for c in cleaned)
        assert counts.get(REMOVED_KIND[channel], 0) == removed, channel


@EXAMPLES
@given(st.text(st.characters(exclude_categories=["Cs"])))
def test_text_without_invisible_characters_is_the_same_object(text: str) -> None:
    text = "".join(c for c in text if not any(c in chars for chars in INVISIBLE.values()))
    sanitizer = Sanitizer()
    assert sanitizer.text(text, "text") is text
    assert sanitizer.counts() == {}


JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(JSON_LIKE)
def test_value_is_idempotent_and_tag_free(value: Any) -> None:
    once = Sanitizer().value(value, "s")
    assert Sanitizer().value(once, "s") is once
    assert not ANY_TAG.search(
        _outside_allowed_flags(repr(once), SanitizeSettings().allowed_flag_tags)
    )


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.one_of(TEXT, st.integers()), JSON_LIKE | st.floats(), max_size=6))
def test_meta_never_raises_and_is_model_ready(meta: dict[Any, Any]) -> None:
    policy = SanitizeSettings()
    cleaned = Sanitizer(policy).meta(meta)
    if cleaned is None:
        return
    json.dumps(cleaned, allow_nan=False)
    assert all(isinstance(key, str) for key in cleaned)
    assert Sanitizer(policy).meta(cleaned) is cleaned
