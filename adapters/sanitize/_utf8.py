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

import regex

__all__ = ["Stripper", "encoded", "stripper"]


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
    others: re.Pattern[bytes] | None = None
    """Those other characters."""

    def best(self, data: bytes) -> bytes:
        if self.wider is None or self.others is None or self.others.search(data):
            return self.prefix
        return self.wider


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
            prefix, channel = known.best(data), known.channel
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
    removals = {
        chr(code): _removal(code, _own_prefix(code, owner, covered), owner)
        for code, channel in owner.items()
    }
    return Stripper(finder, removals)


def _removal(code: int, prefix: bytes, owner: Mapping[int, str]) -> _Removal:
    encoding, channel = chr(code).encode("utf-8"), owner[code]
    if len(prefix) < len(encoding) or len(encoding) < 3:
        return _Removal(prefix, channel)
    wider = encoding[:-1]
    low, high = (ord((wider + bytes([last])).decode("utf-8")) for last in (0x80, 0xBF))
    others = [other for other in range(low, high + 1) if owner.get(other) != channel]
    last_bytes = b"".join(re.escape(chr(other).encode("utf-8")[-1:]) for other in others)
    return _Removal(prefix, channel, wider, re.compile(re.escape(wider) + b"[" + last_bytes + b"]"))


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
