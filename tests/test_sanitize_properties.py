"""Properties of the cleaner, over text built from the pieces attacks and real text are made of."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.sanitize._text import (
    BIDI_CONTROLS,
    BLACK_FLAG,
    CANCEL_TAG,
    JOINERS,
    ZERO_WIDTH,
    tag_sequence,
)
from visiongate.engine._settings import SanitizeSettings

EXAMPLES = settings(max_examples=300, deadline=None)

TAG_RANGE = "\U000e0000-\U000e007f"
ANY_TAG = re.compile(f"[{TAG_RANGE}]")

SETTINGS = st.sampled_from(
    [
        SanitizeSettings(),
        SanitizeSettings(strip_bidi=True, strip_zero_width=True),
        SanitizeSettings(allowed_flag_tags=("usca", "gbeng", "gb")),
        SanitizeSettings(allowed_flag_tags=()),
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
        *JOINERS,
        "\ufe0f",
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


@EXAMPLES
@given(TEXT, SETTINGS)
def test_no_tag_survives_outside_an_allowed_flag(text: str, policy: SanitizeSettings) -> None:
    cleaned = Sanitizer(policy).text(text, "text")
    assert not ANY_TAG.search(_outside_allowed_flags(cleaned, policy.allowed_flag_tags))


@EXAMPLES
@given(TEXT, SETTINGS)
def test_optional_controls_do_not_survive_when_switched_on(
    text: str, policy: SanitizeSettings
) -> None:
    cleaned = Sanitizer(policy).text(text, "text")
    if policy.strip_bidi:
        assert not set(cleaned) & set(BIDI_CONTROLS)
    if policy.strip_zero_width:
        assert not set(cleaned) & set(ZERO_WIDTH)


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
def test_tag_count_is_what_went_missing(text: str, policy: SanitizeSettings) -> None:
    sanitizer = Sanitizer(policy)
    cleaned = sanitizer.text(text, "text")
    removed = len(ANY_TAG.findall(text)) - len(ANY_TAG.findall(cleaned))
    assert sanitizer.counts().get("text", {}).get("tag_chars", 0) == removed


@EXAMPLES
@given(st.text(st.characters(exclude_categories=["Cs"], exclude_characters=None)))
def test_clean_text_is_the_same_object(text: str) -> None:
    text = ANY_TAG.sub("", text)
    sanitizer = Sanitizer()
    assert sanitizer.text(text, "text") is text
    assert sanitizer.counts() == {}


@EXAMPLES
@given(st.text(st.characters(exclude_characters=BIDI_CONTROLS + ZERO_WIDTH + JOINERS)))
def test_clean_text_is_the_same_object_with_every_switch_on(text: str) -> None:
    text = ANY_TAG.sub("", text)
    policy = SanitizeSettings(strip_bidi=True, strip_zero_width=True)
    assert Sanitizer(policy).text(text, "text") is text


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
