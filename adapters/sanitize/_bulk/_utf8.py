"""Invisible characters removed in bulk on a text's UTF-8 bytes, at C speed (issue 37).

A regex substitution pays for every character it removes (a match, two slices), so a payload
woven between the letters of a text costs as many matches as it has characters. On the bytes
it costs a pass per kind of character present instead: every invisible character is
non-ASCII, and its UTF-8 encoding begins with a lead byte, so `bytes.replace` of its encoding
removes every occurrence at once and nothing else. Where a whole block of code points belongs
to one channel (the 128 tag characters are two 3-byte prefixes), the prefix is removed, and
decoding with `errors="ignore"` drops the continuation bytes left after it: a message spelled
in 95 different tag characters costs two replacements, not 95. Python runs once per prefix
present, never per character.

Text holding a lone surrogate (possible in JSON) has no UTF-8 encoding: callers take their
per-character path for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import regex

__all__ = ["Stripper", "bulk_stripper", "encoded", "stripper"]


def encoded(text: str) -> bytes | None:
    """`text` in UTF-8, or None when it holds a lone surrogate (it has no UTF-8 form)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


@dataclass(frozen=True)
class _Removal:
    """How one character is removed: its own prefix, or a wider one its neighbours share."""

    prefix: bytes
    """The shortest prefix of its encoding that only characters of its channel begin with."""
    channel: str
    wider: bytes | None = None
    """A shorter prefix, that other characters begin with too (VS1-VS16 share `\xef\xb8`
    with the vertical forms): usable when none of them is in the text."""
    owned: tuple[bytes, ...] = ()
    """The prefixes one byte longer than `wider` that only this channel's characters begin
    with, when they are few: `wider` is usable when they account for every occurrence of it
    (a few counts at C speed; a search would stop at each character to be removed)."""
    others: tuple[regex.Pattern[str], ...] | None = None
    """Otherwise, what else begins with `wider`, one search per range of code points:
    usable when none is in the text (`regex` scans a text for one range at about 0.7 ns a
    character; a search of the bytes for those prefixes took 2-5 ns a byte)."""

    def best(self, data: bytes, text: str) -> bytes:
        """The prefix to remove from `data`, the UTF-8 form of `text`."""
        if self.wider is None:
            return self.prefix
        if self.others is not None:
            return self.prefix if any(other.search(text) for other in self.others) else self.wider
        total = data.count(self.wider)
        return self.wider if total == sum(map(data.count, self.owned)) else self.prefix


@dataclass(frozen=True)
class Stripper:
    """Removes every character of some channels from text, counting them per channel."""

    finder: re.Pattern[str] | regex.Pattern[str]
    """One character to remove (any search that finds them all, at C speed)."""
    removals: Mapping[str, _Removal]
    """A character -> how it is removed."""

    def strip(self, text: str, data: bytes, start: int = 0) -> tuple[str, dict[str, int]]:
        """`text` (encoded as `data`) without those characters (none before `start`), and
        how many of each channel went."""
        counts: dict[str, int] = {}
        cleaned = text
        while (found := self.finder.search(cleaned, start)) is not None:
            known = self.removals.get(found.group())
            if known is None:  # the finder's wider set (a newer Unicode): not ours to remove
                start = found.end()
                continue
            prefix, channel = known.best(data, cleaned), known.channel
            # Every occurrence at once; a prefix shorter than the encoding leaves continuation
            # bytes, which decoding with `ignore` drops.
            shorter = data.replace(prefix, b"")
            counts[channel] = counts.get(channel, 0) + (len(data) - len(shorter)) // len(prefix)
            data = shorter
            # What comes before the character found is unchanged: look on from there.
            cleaned, start = data.decode("utf-8", "ignore"), found.start()
        return cleaned, counts


def stripper(
    channels: Mapping[str, frozenset[int]], finder: re.Pattern[str] | regex.Pattern[str]
) -> Stripper:
    """A `Stripper` for the code points of each channel (channels do not overlap); `finder`
    finds each of them (and may find more: those are left alone)."""
    owner = {code: channel for channel, codes in channels.items() for code in codes}
    covered: dict[bytes, bool] = {}
    # One removal per prefix: the 4,096 code points of U+E0000-E0FFF share a few dozen.
    shared: dict[bytes, _Removal] = {}
    removals = {}
    for code in owner:
        prefix = _own_prefix(code, owner, covered)
        if prefix not in shared:
            shared[prefix] = _removal(code, prefix, owner)
        removals[chr(code)] = shared[prefix]
    return Stripper(finder, removals)


def _removal(code: int, prefix: bytes, owner: Mapping[int, str]) -> _Removal:
    """The removal by `prefix`, and by the prefix one byte shorter where that one is not a lead
    byte alone: the next bytes under it that begin another channel's character (or any other
    character) are its `others`."""
    channel = owner[code]
    if len(prefix) < 3:
        return _Removal(prefix, channel)
    wider = prefix[:-1]
    pad = len(chr(code).encode("utf-8")) - len(prefix)
    longer = [wider + bytes([byte]) for byte in range(0x80, 0xC0)]
    codes = frozenset(other for other, its in owner.items() if its == channel)
    owned = tuple(item for item in longer if _all_owned(item, pad, codes))
    if len(owned) <= _MOST_COUNTS:
        return _Removal(prefix, channel, wider, owned)
    low, high = _span(wider, pad + 1)
    other = [code for code in range(low, high + 1) if code not in codes]
    return _Removal(prefix, channel, wider, others=tuple(map(regex.compile, _ranges(other))))


def _ranges(codes: list[int]) -> list[str]:
    """A class of one range of code points for each run of consecutive `codes` (sorted)."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return [f"[{re.escape(chr(low))}-{re.escape(chr(high))}]" for low, high in runs]


def _span(prefix: bytes, pad: int) -> tuple[int, int]:
    """The first and last code points whose encoding begins with `prefix` (`pad` bytes on)."""
    return (
        ord((prefix + b"\x80" * pad).decode("utf-8")),
        ord((prefix + b"\xbf" * pad).decode("utf-8")),
    )


_MOST_COUNTS = 4
"""Counting more prefixes than this costs more than a search for the others."""


def _all_owned(prefix: bytes, pad: int, codes: frozenset[int]) -> bool:
    try:
        low = ord((prefix + b"\x80" * pad).decode("utf-8"))
        high = ord((prefix + b"\xbf" * pad).decode("utf-8"))
    except UnicodeDecodeError:  # no character begins so (past U+10FFFF, say)
        return True
    return codes.issuperset(range(low, high + 1))


def _own_prefix(code: int, owner: Mapping[int, str], covered: dict[bytes, bool]) -> bytes:
    encoding = chr(code).encode("utf-8")
    # A lead byte alone covers whole planes: never one channel's. From two bytes on, the code
    # points sharing a prefix are one contiguous range, from its `\x80` to its `\xbf` filling.
    for length in range(2, len(encoding)):
        prefix = encoding[:length]
        if prefix not in covered:
            pad = len(encoding) - length
            low = ord((prefix + b"\x80" * pad).decode("utf-8"))
            high = ord((prefix + b"\xbf" * pad).decode("utf-8"))
            covered[prefix] = all(owner.get(other) == owner[code] for other in range(low, high + 1))
        if covered[prefix]:
            return prefix
    return encoding


@lru_cache(maxsize=16)
def bulk_stripper(channels: tuple[str, ...]) -> Stripper:
    """Removes every character of `channels` (built on first use: about 50 ms)."""
    from visiongate.engine import INVISIBLE_CHANNELS

    from .._invisible import channel_chars, char_class
    from .._screen import ANY_INVISIBLE

    codes = {channel: channel_chars(channel) for channel in channels}
    everything = len(channels) == len(INVISIBLE_CHANNELS)
    every = frozenset().union(*codes.values())
    finder = (
        ANY_INVISIBLE if everything else re.compile(f"[{char_class(every)}]" if every else "(?!)")
    )
    return stripper(codes, finder)
