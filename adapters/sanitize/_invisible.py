"""The model of "invisible": six channels of Default_Ignorable_Code_Point and the legitimate
uses the Unicode standard names for them, read from the generated `_invisible_data` table.

A character is invisible when it is Default_Ignorable_Code_Point (DerivedCoreProperties.txt):
renderers draw nothing for it, and the model reads it. The channels partition that set:

- `tags`: U+E0000–E007F. Legitimate only inside an allowed emoji tag sequence (a flag).
- `variation_selectors`: VS1–VS256 and the Mongolian free variation selectors. Legitimate as
  one selector after a base that has that variation (StandardizedVariants.txt,
  emoji-variation-sequences.txt, the Ideographic Variation Database).
- `zero_width`: ZWSP, ZWNJ, ZWJ, word joiner, BOM, the invisible operators. ZWJ and ZWNJ are
  legitimate next to a virama, between letters of a joining script, and (ZWJ) inside an RGI
  emoji ZWJ sequence.
- `bidi`: embeddings, overrides, isolates and the marks LRM, RLM, ALM. The marks are
  legitimate in a paragraph that holds right-to-left letters.
- `fillers`: the Hangul fillers. The choseong and jungseong fillers are legitimate inside a
  conjoining jamo syllable that has a real jamo too.
- `other_ignorables`: the rest. A soft hyphen inside a word, the combining grapheme joiner
  before a mark and the Mongolian vowel separator before a final A or E are legitimate.

Everything else in a channel is not, and neither is a run of two or more invisible characters
outside an emoji or tag sequence: each legitimate use is a single character in context.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Final

from visiongate.engine import INVISIBLE_CHANNELS

from ._flags import BLACK_FLAG, CANCEL_TAG
from ._invisible_data import TABLES
from ._words import joiner_in_a_code, mark_changes_nothing

__all__ = [
    "BLACK_FLAG",
    "CANCEL_TAG",
    "CONTEXTUAL",
    "VARIATION_SELECTOR_16",
    "ZWJ",
    "channel_chars",
    "channel_of",
    "char_class",
    "emoji_zwj_sequences",
    "has_variation",
    "is_legitimate_single",
    "standardized_bases",
    "table_codes",
    "variation_bases",
]

ZWJ: Final = "\u200d"
VARIATION_SELECTOR_16: Final = "\ufe0f"
"""Emoji presentation: the selector emoji sequences use."""
ZWNJ: Final = "\u200c"
_MARKS: Final = "\u200e\u200f\u061c"
"""LRM, RLM, ALM: the bidi controls that cannot reorder a run by themselves."""
_SOFT_HYPHEN: Final = "\u00ad"
_WORD_MARKS: Final = frozenset((ZWNJ, ZWJ, _SOFT_HYPHEN))
_GRAPHEME_JOINER: Final = "\u034f"
_VOWEL_SEPARATOR: Final = "\u180e"
_CHOSEONG_FILLER: Final = "\u115f"
_JUNGSEONG_FILLER: Final = "\u1160"
_FINAL_VOWELS: Final = "\u1820\u1821"
"""MONGOLIAN LETTER A and E, which the vowel separator stands before."""
# Paragraph separators (Bidi_Class B): a mark is judged by its own paragraph.
_PARAGRAPH_ENDS: Final = re.compile("[\n\r\x1c-\x1e\x85\u2029]")


def table_codes(name: str) -> frozenset[int]:
    """The code points of a range table (`channel.tags`, `context.viramas`, ...)."""
    return _codes(name)


@cache
def _codes(name: str) -> frozenset[int]:
    codes: set[int] = set()
    for token in TABLES[name].split():
        low, _, high = token.partition("-")
        codes.update(range(int(low, 16), int(high or low, 16) + 1))
    return frozenset(codes)


def char_class(codes: Iterable[int]) -> str:
    """A regular-expression character class (without brackets) matching exactly `codes`."""
    ordered = sorted(set(codes))
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        end = index
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        low, high = chr(ordered[index]), chr(ordered[end])
        parts.append(re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}")
        index = end + 1
    return "".join(parts)


def channel_chars(channel: str) -> frozenset[int]:
    """The code points of one channel."""
    return table_codes(f"channel.{channel}")


@cache
def _channel_index() -> dict[int, str]:
    return {code: channel for channel in INVISIBLE_CHANNELS for code in channel_chars(channel)}


def channel_of(char: str) -> str | None:
    """The channel of an invisible character, or None for any other character."""
    return _channel_index().get(ord(char))


@cache
def _contextual() -> frozenset[int]:
    selectors = channel_chars("variation_selectors")
    named = ZWNJ + ZWJ + _MARKS + _SOFT_HYPHEN + _GRAPHEME_JOINER + _VOWEL_SEPARATOR
    return selectors | {ord(char) for char in named + _CHOSEONG_FILLER + _JUNGSEONG_FILLER}


CONTEXTUAL: Final = _contextual()
"""The invisible characters that have a legitimate use somewhere (tags aside: flags are
sequences). Every other invisible character is stripped wherever it stands."""


@cache
def _variations() -> dict[int, frozenset[int]]:
    pairs: dict[int, frozenset[int]] = {}
    for token in TABLES["variation.standardized"].split():
        base, _, selectors = token.partition(":")
        pairs[int(base, 16)] = frozenset(int(vs, 16) for vs in selectors.split(","))
    return pairs


@cache
def _ideographic() -> dict[int, int]:
    counts: dict[int, int] = {}
    for token in TABLES["variation.ideographic"].split():
        base, _, count = token.partition(":")
        counts[int(base, 16)] = int(count)
    return counts


@cache
def emoji_zwj_sequences() -> frozenset[str]:
    """Every RGI emoji ZWJ sequence, in each qualification emoji-test.txt lists."""
    return frozenset(
        "".join(chr(int(code, 16)) for code in token.split("."))
        for token in TABLES["emoji.zwj_sequences"].split()
    )


def variation_bases(ideographic: bool) -> frozenset[int]:
    """Every character a selector may follow: of the standardized and emoji variation
    sequences (VS1-VS16, the Mongolian selectors), or of the ideographic ones (VS17-VS256)."""
    return frozenset(_ideographic() if ideographic else _variations())


def standardized_bases(selector: int) -> frozenset[int]:
    """Every base a standardized or emoji variation sequence pairs with `selector` (VS1-VS16,
    the Mongolian selectors)."""
    return _bases_of()[selector]


@cache
def _bases_of() -> dict[int, frozenset[int]]:
    bases: dict[int, set[int]] = {}
    for base, selectors in _variations().items():
        for selector in selectors:
            bases.setdefault(selector, set()).add(base)
    return defaultdict(frozenset, {selector: frozenset(its) for selector, its in bases.items()})


def has_variation(base: str, selector: str) -> bool:
    """Whether `base` followed by `selector` is a variation sequence Unicode lists."""
    return _has_variation(base, selector)


def _has_variation(base: str, selector: str) -> bool:
    code, vs = ord(base), ord(selector)
    if 0xE0100 <= vs <= 0xE01EF:
        return vs - 0xE0100 < _ideographic().get(code, 0)
    return vs in _variations().get(code, ())


@cache
def _bounds(name: str) -> tuple[list[int], list[int]]:
    lows, highs = [], []
    for token in TABLES[name].split():
        low, _, high = token.partition("-")
        lows.append(int(low, 16))
        highs.append(int(high or low, 16))
    return lows, highs


def _in(name: str, char: str) -> bool:
    """Whether `char` is in a range table (a bisection: the letter tables are large)."""
    if not char:
        return False
    lows, highs = _bounds(name)
    index = bisect_right(lows, ord(char)) - 1
    return index >= 0 and ord(char) <= highs[index]


def _is_letter(char: str) -> bool:
    return _in("context.letters", char)


def _is_letter_or_mark(char: str) -> bool:
    return _is_letter(char) or _in("context.marks", char)


def _joiner_is_legitimate(char: str, before: str, after: str) -> bool:
    # Next to a virama: IDNA's CONTEXTJ rule (RFC 5892 A.1, A.2), and the Bengali and Kannada
    # forms where ZWJ stands before the virama (র‍্য). A ZWNJ after a virama asks for the
    # explicit virama of a conjunct: it changes nothing unless a letter follows.
    if _in("context.viramas", before):
        return char == ZWJ or _is_letter(after)
    if _is_letter(before) and _in("context.viramas", after):
        return True
    return _in("context.joining_letters", before) and _in("context.joining_letters", after)


def _mark_is_legitimate(text: str, index: int) -> bool:
    start = index
    while start > 0 and not _PARAGRAPH_ENDS.match(text, start - 1):
        start -= 1
    found = _PARAGRAPH_ENDS.search(text, index)
    end = found.start() if found else len(text)
    return _right_to_left().search(text, start, end) is not None


@cache
def _right_to_left() -> re.Pattern[str]:
    return re.compile(f"[{char_class(table_codes('context.right_to_left'))}]")


def is_legitimate_single(text: str, index: int) -> bool:
    """Whether the invisible character at `index`, standing alone between visible neighbours,
    is one of the legitimate uses the module docstring names."""
    char = text[index]
    if char in _MARKS:
        return _mark_is_legitimate(text, index) and not mark_changes_nothing(text, index)
    if not _legitimate_between(text[index - 1 : index + 2] if index else "\0" + text[:2]):
        return False
    # One bit per letter in marks real text uses too: judged by their word (`_words`).
    return char not in _WORD_MARKS or not joiner_in_a_code(text, index)


@lru_cache(maxsize=4096)
def _legitimate_between(around: str) -> bool:
    """The judgement for every use but marks, which depends only on the two neighbours: real
    text repeats the same few (a Persian letter, ZWNJ, a letter), so it is cached."""
    before, char, after = around[0].strip("\0"), around[1], around[2:3]
    if ord(char) in channel_chars("variation_selectors"):
        return bool(before) and _has_variation(before, char)
    if char in (ZWNJ, ZWJ):
        return _joiner_is_legitimate(char, before, after)
    return _other_is_legitimate(char, before, after)


def _other_is_legitimate(char: str, before: str, after: str) -> bool:
    if char == _SOFT_HYPHEN:
        return _is_letter_or_mark(before) and _is_letter(after)
    if char == _GRAPHEME_JOINER:
        return _is_letter_or_mark(before) and _in("context.marks", after)
    if char == _VOWEL_SEPARATOR:
        return _in("context.mongolian", before) and bool(after) and after in _FINAL_VOWELS
    if char == _CHOSEONG_FILLER:
        # A syllable of fillers only is blank: the "invisible name" trick.
        return _in("context.hangul_vowel", after) and after != _JUNGSEONG_FILLER
    if char == _JUNGSEONG_FILLER:
        return _in("context.hangul_leading", before) and before != _CHOSEONG_FILLER
    return False
