"""Bulk paths where Python works once per run of invisible characters, or not at all (issue 37).

Both apply when every channel strips (no `flag`, no `keep`), which is the default policy.

`split_runs`: one search at C speed cuts the text at every run of invisible characters
(`regex`'s Default_Ignorable_Code_Point, the tables' own set), so a smuggled message of sixty
tag characters costs one match, not sixty. When no run can be a legitimate use (no lone
contextual character, no emoji joiner or selector, no flag's base in the text), the text is the
pieces between the runs. Text with a run every few letters is left to the byte stripper
(`_utf8`), which pays per kind of character, not per run: the split stops after a bounded
number of runs, a short prefix of such a text.

`lone_selectors`: text whose only invisible characters are variation selectors of the
standardized kind (VS1-VS16, the Mongolian ones), the one-bit-per-letter payload in any script.
The walk strips every run of two or more and judges a lone one by the character before it;
here both are substitutions at C speed. A lone selector stays when the character before it
is a base of that very variation (a look-behind per selector, one class of its bases each).
Without a ZWJ no emoji ZWJ sequence can form, so an emoji is a base like any other: exactly
the walk's outcome, counts included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Final

import regex

from .._invisible import (
    CONTEXTUAL,
    VARIATION_SELECTOR_16,
    ZWJ,
    channel_chars,
    char_class,
    standardized_bases,
)
from .._screen import ANY_INVISIBLE
from ._present import has_astral
from ._selectors import marked_for_keeping, placeholder
from ._utf8 import Stripper, encoded, stripper

__all__ = ["LoneSelectors", "lone_selectors", "split_runs"]

_RUN: Final = r"(\p{Default_Ignorable_Code_Point}+)"
_RUNS_PER_CHARACTER: Final = 64
"""Beyond one run in this many characters the byte stripper is cheaper than the split."""
_FEWEST_RUNS: Final = 16
_SAMPLE: Final = 1024
_BLACK_FLAG: Final = "\U0001f3f4"
_TAGS: Final = "[\U000e0000-\U000e007f]*"
_PRIVATE: Final = "[\U000f0000-\U000f01ff]"
"""The placeholders' range (`_selectors`): a text holding one takes the walk."""


@cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    """Compiled on first use: a process that meets no invisible character never pays."""
    return regex.compile(pattern)


@cache
def _contextual() -> re.Pattern[str]:
    return re.compile(f"[{char_class(CONTEXTUAL)}]")


def split_runs(text: str) -> tuple[str, str, bool] | None:
    """`text` without its runs of invisible characters, those runs joined, and whether they
    are all tag characters; None when the text has many runs, or one that may be a
    legitimate use (the walk judges it then)."""
    if _BLACK_FLAG in text:
        return None
    # A payload woven between the letters shows in its first characters: a cheap look there.
    if (
        len(_compiled(_RUN).findall(text, 0, _SAMPLE))
        > _SAMPLE // _RUNS_PER_CHARACTER + _FEWEST_RUNS
    ):
        return None
    most = len(text) // _RUNS_PER_CHARACTER + _FEWEST_RUNS
    parts = _compiled(_RUN).split(text, maxsplit=most)
    if len(parts) > 2 * most:
        return None
    runs = parts[1::2]
    removed = "".join(runs)
    # Tags only (the usual smuggling) settle it with one range test: no tag stands alone.
    only_tags = _compiled(_TAGS).fullmatch(removed) is not None
    if not only_tags and _contextual().search(removed) and not all(map(_never_legitimate, runs)):
        return None
    return "".join(parts[::2]), removed, only_tags


def _never_legitimate(run: str) -> bool:
    # A lone contextual character may be a legitimate use, and so may a run holding what emoji
    # sequences are made of; any other run of two or more is a payload (see `_walk`).
    if len(run) == 1:
        return _contextual().match(run) is None
    return ZWJ not in run and VARIATION_SELECTOR_16 not in run


@dataclass(frozen=True)
class LoneSelectors:
    """Cleans text whose only invisible characters are standardized variation selectors."""

    candidates: re.Pattern[str]
    """A base of the Basic Multilingual Plane with a lone selector after it: one class (a
    bitmap to `re`, O(1) a character) the search scans for."""
    astral_candidates: tuple[tuple[re.Pattern[str], bool], ...]
    """Searches for an astral base with a lone selector after it (`_astral_candidates`),
    and whether a hit is the selector (else it is the base, and ends at the selector)."""
    pairs: frozenset[str]
    """Every standardized variation sequence: a base and its selector."""
    stripper: Stripper
    """Removes every standardized selector from the UTF-8 bytes."""

    def clean(
        self, text: str, proven: bool = False, astral: bool | None = None
    ) -> tuple[str, int, int] | None:
        """The cleaned text, how many selectors went and how many stayed; None when the text
        holds another invisible character (or a lone surrogate, or a placeholder's code).
        `proven`: the caller has shown selectors are its only invisible characters;
        `astral`: whether the text has an astral character, when the caller knows."""
        keep = self._kept(text, map(re.Match.end, self.candidates.finditer(text)))
        if astral if astral is not None else has_astral(text):
            for candidates, is_selector in self.astral_candidates:
                where = re.Match.start if is_selector else re.Match.end
                keep.update(self._kept(text, map(where, candidates.finditer(text))))
        if keep and _compiled(_PRIVATE).search(text) is not None:
            return None
        marked = marked_for_keeping(text, keep) if keep else text
        data = encoded(marked)
        if data is None:
            return None
        cleaned, counts = self.stripper.strip(marked, data)
        if not proven and ANY_INVISIBLE.search(cleaned) is not None:
            return None
        removed = sum(counts.values())
        if not removed:
            return text, 0, len(keep)
        for selector in set(keep.values()):
            cleaned = cleaned.replace(placeholder(selector), selector)
        return cleaned, removed, len(keep)

    def _kept(self, text: str, selectors: Iterable[int]) -> dict[int, str]:
        """Those of the candidate `selectors` (indices) that pair with the base before them."""
        pairs = self.pairs
        return {index: text[index] for index in selectors if text[index - 1 : index + 1] in pairs}


_SPAN_GAP: Final = 0x1000
"""Astral bases of one plane closer than this share one range in the candidate search."""


@cache
def lone_selectors() -> LoneSelectors:
    """Built on first use (the classes of bases take a few milliseconds)."""
    codes = sorted(code for code in channel_chars("variation_selectors") if code < 0xE0100)
    any_selector = f"[{char_class(codes)}]"
    pairs = {(base, code) for code in codes for base in standardized_bases(code)}
    plane = char_class(base for base, _ in pairs if base < 0x10000)
    lone = f"(?!{any_selector})"
    spans = _astral_spans(sorted(pair for pair in pairs if pair[0] > 0xFFFF))
    only = stripper({"variation_selectors": frozenset(codes)}, re.compile(any_selector))
    return LoneSelectors(
        candidates=re.compile(f"[{plane}](?={any_selector}{lone})"),
        astral_candidates=_astral_candidates(spans, pairs, lone),
        pairs=frozenset(chr(base) + chr(code) for base, code in pairs),
        stripper=only,
    )


_EMOJI_PRESENTATION: Final = frozenset((0xFE0E, 0xFE0F))


def _astral_candidates(
    spans: list[tuple[int, int, set[int]]], pairs: set[tuple[int, int]], lone: str
) -> tuple[tuple[re.Pattern[str], bool], ...]:
    """Emoji are common in text, and VS15/VS16 after them rare: that search looks for those
    selectors, each with its exact class of bases behind it (a literal each, which `re`
    scans for at C speed). Hieroglyphs and plane 2 ideographs are rare, and a selector after
    each letter is the payload: that search looks for their spans, in one class."""
    emoji = [span for span in spans if span[2] <= _EMOJI_PRESENTATION]
    rare = [span for span in spans if span not in emoji]
    searches: list[tuple[str, bool]] = []
    if emoji:
        codes = sorted(set().union(*(span[2] for span in emoji)))
        searches.append(
            (
                "|".join(
                    f"{re.escape(chr(code))}(?<=[{_astral_bases_of(code, emoji, pairs)}]"
                    f"{re.escape(chr(code))}){lone}"
                    for code in codes
                ),
                True,
            )
        )
    if rare:
        bases = "".join(f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high, _ in rare)
        after = char_class(set().union(*(span[2] for span in rare)))
        searches.append((f"[{bases}](?=[{after}]{lone})", False))
    return tuple((re.compile(pattern), is_selector) for pattern, is_selector in searches)


def _astral_bases_of(
    code: int, spans: list[tuple[int, int, set[int]]], pairs: set[tuple[int, int]]
) -> str:
    return char_class(
        base
        for base, selector in pairs
        if selector == code and any(low <= base <= high for low, high, _ in spans)
    )


def _astral_spans(pairs: list[tuple[int, int]]) -> list[tuple[int, int, set[int]]]:
    """The astral bases (sorted pairs) cut into spans where they lie close, with the
    selectors each span's bases take: emoji (VS15, VS16) apart from hieroglyphs (VS1-VS7)."""
    spans: list[tuple[int, int, set[int]]] = []
    for base, selector in pairs:
        if spans and base - spans[-1][1] < _SPAN_GAP and base >> 16 == spans[-1][1] >> 16:
            low, _, selectors = spans[-1]
            spans[-1] = (low, base, selectors | {selector})
        else:
            spans.append((base, base, {selector}))
    return spans
