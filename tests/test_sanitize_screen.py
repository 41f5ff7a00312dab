"""The sanitizer's first look only ever proves absence: it never calls text clean that holds an
invisible character, and where it cannot prove absence it never points past the first one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.sanitize._invisible import channel_chars
from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.sanitize._screen import clean_until
from visiongate.engine._settings import INVISIBLE_CHANNELS

INVISIBLE = frozenset(
    chr(code) for channel in INVISIBLE_CHANNELS for code in channel_chars(channel)
)
HIDDEN = [*sorted(INVISIBLE)[::97], "\u00ad", "\u200b", "\ufeff", "\U000e0041", "\U000e0fff"]
VISIBLE = [
    "The screenshot shows the settings page. ",
    "café ",
    "It’s ",
    "日本語のテキスト。",
    "Снимок экрана ",
    "Done ✅ 🚀 👍🏽 ",
    "\ud83d",  # a lone surrogate, as a bad JSON escape leaves it
    "\U0001bc9f\U0001d172\U000e1000",  # next to the invisible astral ranges, but outside
    "\u200a\u2010\u2070\ufdff\ufff9",  # next to the invisible BMP ranges, but outside
]
TEXTS = st.lists(st.sampled_from(VISIBLE + HIDDEN), min_size=1, max_size=60).map("".join)
PAD = "x" * 256  # long enough that the look takes the chunked path


def _first_invisible(text: str) -> int | None:
    return next((index for index, char in enumerate(text) if char in INVISIBLE), None)


@settings(max_examples=400, deadline=None)
@given(
    TEXTS,
    st.sampled_from(["", PAD]),
    st.sampled_from([1, 2, 5, 64, 1 << 12]),
    st.sampled_from([3, 17, 1 << 16]),
)
def test_the_look_never_hides_an_invisible_character(
    body: str, pad: str, sample: int, chunk: int
) -> None:
    text = pad + body
    first = _first_invisible(text)
    found = clean_until(text, sample, chunk)
    if first is None:
        assert found is None
    else:
        assert found is not None
        assert found <= first


def _long(pieces: list[str], size: int) -> str:
    once = "".join(pieces)
    return (once * (size // len(once) + 1))[:size]


SPARSE = _long(["The screenshot shows three toggles. ", "Done ✅ 🚀 ", "It’s the café. "], 200_000)
DENSE = _long(["スクリーンショットには設定ページが表示されています。"], 200_000)


def test_one_hidden_character_is_found_wherever_it_stands_in_long_text() -> None:
    # Either side of the first look's sample and of its chunks, and at both ends.
    for text in (SPARSE, DENSE):
        assert clean_until(text) is None
        for index in (0, 4095, 4096, 4097, 65535, 4096 + 65536, len(text) - 1):
            for hidden in ("\u200b", "\U000e0041", "\u3164"):  # never legitimate
                dirty = text[:index] + hidden + text[index:]
                found = clean_until(dirty)
                assert found is not None
                assert found <= index
                sanitizer = Sanitizer()
                assert sanitizer.text(dirty, "text") == text
                assert sum(sanitizer.counts()["text"].values()) == 1
