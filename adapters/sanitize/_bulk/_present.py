"""Which invisible characters a text holds, found at C speed over the whole text (issue 37).

Nearly all text holds none, and a text that holds some mostly holds one kind (tag characters,
or a selector after every letter). Both answers come from passes that never return to Python
per character:

- The invisible characters of the Basic Multilingual Plane (66 of them) are the only ones a
  charmap encoding maps: `codecs.charmap_encode` with `errors="ignore"` drops every other
  character in a C loop (an O(1) table lookup each), so what it returns are those present, one
  byte each. About 2 ns a character, in any script; a `re` class is 5-7 ns, `regex`'s
  property search 3 ns.
- The astral ones (tags, VS17-VS256, a few others) can only be in text that has an astral
  character at all, which its UTF-16 length tells (a copy, for text without one). Then a
  `regex` search for one range of code points (about 0.7 ns a character; a class of several
  ranges is ten times slower) per plane holding them rules them out, and a `re` class of the
  exact set confirms a hit.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import regex

from .._invisible import channel_chars, char_class

__all__ = ["Present", "astral_hidden", "has_astral", "is_sparse", "present"]

_UNMAPPED: Final = "\ufffe"
"""What `codecs.charmap_build` reads as "no byte for this character"."""
_NONE: Final[frozenset[str]] = frozenset()


@dataclass(frozen=True)
class _AstralSet:
    """Astral code points, ruled out by one range search per plane, confirmed exactly."""

    ranges: tuple[regex.Pattern[str], ...]
    exact: re.Pattern[str]

    def in_text(self, text: str) -> bool:
        if not any(finder.search(text) for finder in self.ranges):
            return False
        return self.exact.search(text) is not None


@dataclass(frozen=True)
class Present:
    """The invisible characters a text holds."""

    plane: frozenset[str]
    """Those of the Basic Multilingual Plane."""
    astral: bool
    """Whether it holds an astral one."""


@cache
def every_invisible() -> frozenset[int]:
    from visiongate.engine import INVISIBLE_CHANNELS

    return frozenset().union(*(channel_chars(channel) for channel in INVISIBLE_CHANNELS))


@cache
def _plane_map() -> tuple[Any, tuple[str, ...]]:
    codes = sorted(code for code in every_invisible() if code < 0x10000)
    # Byte 0 must decode to U+0000 for the fast map (else it is a dict): NUL is mapped too,
    # and its byte dropped from the answer.
    table = "\x00" + "".join(map(chr, codes))
    if len(table) > 256:
        raise ValueError("more invisible characters in the plane than a charmap holds")
    return codecs.charmap_build(table + _UNMAPPED * (256 - len(table))), tuple(table)


@cache
def astral_set(codes: frozenset[int]) -> _AstralSet:
    """A search for the astral ones among `codes` (none: never found)."""
    astral = sorted(code for code in codes if code >= 0x10000)
    planes: dict[int, list[int]] = {}
    for code in astral:
        planes.setdefault(code >> 16, []).append(code)
    ranges = tuple(
        regex.compile(f"[{re.escape(chr(min(its)))}-{re.escape(chr(max(its)))}]")
        for its in planes.values()
    )
    return _AstralSet(ranges, re.compile(f"[{char_class(astral)}]" if astral else "(?!)"))


def has_astral(text: str) -> bool:
    """Whether `text` holds a character beyond U+FFFF (it takes two UTF-16 code units)."""
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)


_ASCII_BYTES: Final = bytes(range(0x80))
_SAMPLE: Final = 1 << 12


def is_sparse(text: str) -> bool:
    """Whether the non-ASCII part of `text`'s first characters is small (less than half a byte
    a character): prose with accents, quotes, an emoji, where `_screen.clean_until`'s drop of
    the ASCII part is the cheaper look; in text that is mostly not ASCII, `present` is."""
    head = text[:_SAMPLE]
    rest = head.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return 2 * len(rest) <= len(head)


def astral_hidden(text: str) -> bool:
    """Whether `text` holds an astral invisible character."""
    return astral_set(every_invisible()).in_text(text)


def present(text: str, astral: bool | None = None) -> Present | None:
    """The invisible characters in `text`; None when it holds none. `astral`: whether it has
    an astral character, when the caller knows (`has_astral`)."""
    encoding_map, table = _plane_map()
    found = codecs.charmap_encode(text, "ignore", encoding_map)[0].replace(b"\x00", b"")
    # One memchr per kind instead of a Python step per character found.
    plane = frozenset(char for byte, char in _bytes_of(table) if byte in found) if found else _NONE
    if astral is None:
        astral = has_astral(text)
    hidden = astral and astral_hidden(text)
    if not plane and not hidden:
        return None
    return Present(plane, hidden)


@cache
def _bytes_of(table: tuple[str, ...]) -> tuple[tuple[bytes, str], ...]:
    return tuple((bytes([index]), char) for index, char in enumerate(table) if index)
