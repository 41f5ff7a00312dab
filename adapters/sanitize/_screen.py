"""The sanitizer's first look at a text: is there any invisible character in it at all?

Nearly all text has none, so this look is what cleaning costs for most of it. It only ever
proves absence: wherever it cannot, it says where the exact search must start, and the
characters before that point hold no invisible character.

Every invisible character (Default_Ignorable_Code_Point) is non-ASCII, so the look drops the
ASCII part in bulk first: UTF-8 encoding and a byte `translate` that deletes the ASCII bytes
run at C speed (about 0.7 ns a character together), leaving the text's non-ASCII characters,
in order, for the property search (about 1.8 ns a character). That pays while the non-ASCII
part is small (prose with punctuation, accents, emoji); in text that is mostly non-ASCII
(Japanese, Russian) the property search over the text is cheaper, and the look switches to it
after a short sample. Chunks keep the buffers small and let a payload near the start stop the
look early. The README's benchmark rows have the figures, and what still bounds them: the
encoder and `translate` stall at every switch between ASCII and non-ASCII, so text with an
emoji every few words gains nothing from the bulk drop.
"""

from __future__ import annotations

from typing import Final

import regex

__all__ = ["ANY_INVISIBLE", "clean_until"]

ANY_INVISIBLE: Final = regex.compile(r"\p{Default_Ignorable_Code_Point}")
"""One invisible character: the regex module looks the property up in its own tables."""
_ASCII_BYTES: Final = bytes(range(0x80))
_SAMPLE: Final = 1 << 12
"""The first non-ASCII chunk is this short: enough to tell dense text, which then costs no
more than the property search alone."""
_CHUNK: Final = 1 << 16
"""Characters per later look: large enough that the per-chunk calls vanish, small enough that
the buffers stay in cache and come from the heap rather than fresh pages."""
_SHORT: Final = 256
"""Below this length the property search alone is cheaper than the bulk drop's calls."""


def clean_until(text: str, sample: int = _SAMPLE, chunk: int = _CHUNK) -> int | None:
    """None when `text` holds no invisible character; otherwise an index before which it
    holds none (at most the first invisible character's)."""
    if len(text) < _SHORT:
        return _search(text, 0)
    start, size = 0, sample
    while start < len(text):
        part = text[start : start + size]
        if not part.isascii():
            rest = part.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
            if 2 * len(rest) > len(part):
                # Dense non-ASCII (more than half a byte per character): the bulk drop
                # keeps nearly everything and cannot pay; the property search can.
                return _search(text, start)
            if ANY_INVISIBLE.search(rest.decode("utf-8", "surrogatepass")) is not None:
                return start
            size = chunk
        start += len(part)
    return None


def _search(text: str, start: int) -> int | None:
    found = ANY_INVISIBLE.search(text, start)
    return None if found is None else found.start()
