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
from dataclasses import dataclass
from functools import cache
from typing import Final

import regex

from ._invisible import (
    CONTEXTUAL,
    VARIATION_SELECTOR_16,
    ZWJ,
    channel_chars,
    char_class,
    standardized_bases,
)
from ._screen import ANY_INVISIBLE
from ._selectors import marked_for_keeping, placeholder
from ._utf8 import Stripper, encoded, stripper

__all__ = ["LoneSelectors", "lone_selectors", "split_runs"]

_RUN: Final = regex.compile(r"(\p{Default_Ignorable_Code_Point}+)")
_RUNS_PER_CHARACTER: Final = 64
"""Beyond one run in this many characters the byte stripper is cheaper than the split."""
_FEWEST_RUNS: Final = 16
_SAMPLE: Final = 1024
_BLACK_FLAG: Final = "\U0001f3f4"
_CONTEXTUAL: Final = re.compile(f"[{char_class(CONTEXTUAL)}]")
_TAGS: Final = re.compile("[\U000e0000-\U000e007f]*")
_PRIVATE: Final = re.compile("[\U000f0000-\U000f01ff]")
"""The placeholders' range (`_selectors`): a text holding one takes the walk."""


def split_runs(text: str) -> tuple[str, str, bool] | None:
    """`text` without its runs of invisible characters, those runs joined, and whether they
    are all tag characters; None when the text has many runs, or one that may be a
    legitimate use (the walk judges it then)."""
    if _BLACK_FLAG in text:
        return None
    # A payload woven between the letters shows in its first characters: a cheap look there.
    if len(_RUN.findall(text, 0, _SAMPLE)) > _SAMPLE // _RUNS_PER_CHARACTER + _FEWEST_RUNS:
        return None
    most = len(text) // _RUNS_PER_CHARACTER + _FEWEST_RUNS
    parts = _RUN.split(text, maxsplit=most)
    if len(parts) > 2 * most:
        return None
    runs = parts[1::2]
    removed = "".join(runs)
    # Tags only (the usual smuggling) settle it with one range test: no tag stands alone.
    only_tags = _TAGS.fullmatch(removed) is not None
    if not only_tags and _CONTEXTUAL.search(removed) and not all(map(_never_legitimate, runs)):
        return None
    return "".join(parts[::2]), removed, only_tags


def _never_legitimate(run: str) -> bool:
    # A lone contextual character may be a legitimate use, and so may a run holding what emoji
    # sequences are made of; any other run of two or more is a payload (see `_walk`).
    if len(run) == 1:
        return _CONTEXTUAL.match(run) is None
    return ZWJ not in run and VARIATION_SELECTOR_16 not in run


@dataclass(frozen=True)
class LoneSelectors:
    """Cleans text whose only invisible characters are standardized variation selectors."""

    kept: re.Pattern[str]
    """A selector right after a base of its variation and before no other selector."""
    stripper: Stripper
    """Removes every standardized selector from the UTF-8 bytes."""

    def clean(self, text: str) -> tuple[str, int, int] | None:
        """The cleaned text, how many selectors went and how many stayed; None when the text
        holds another invisible character (or a lone surrogate, or a placeholder's code)."""
        keep = {hit.start(): hit.group() for hit in self.kept.finditer(text)}
        if keep and _PRIVATE.search(text) is not None:
            return None
        marked = marked_for_keeping(text, keep) if keep else text
        data = encoded(marked)
        if data is None:
            return None
        cleaned, counts = self.stripper.strip(marked, data)
        if ANY_INVISIBLE.search(cleaned) is not None:
            return None
        removed = sum(counts.values())
        if not removed:
            return text, 0, len(keep)
        for selector in set(keep.values()):
            cleaned = cleaned.replace(placeholder(selector), selector)
        return cleaned, removed, len(keep)


@cache
def lone_selectors() -> LoneSelectors:
    """Built on first use (the classes of bases take a few milliseconds)."""
    codes = sorted(code for code in channel_chars("variation_selectors") if code < 0xE0100)
    any_selector = f"[{char_class(codes)}]"
    kept = "|".join(_kept(chr(code), standardized_bases(code)) for code in codes)
    only = stripper({"variation_selectors": frozenset(codes)}, re.compile(any_selector))
    return LoneSelectors(re.compile(f"(?:{kept})(?!{any_selector})"), only)


def _kept(selector: str, bases: frozenset[int]) -> str:
    escaped = re.escape(selector)
    # Anchored on the selector (the search's prefix), the base looked up behind it: a text
    # with a base at every letter costs a look per selector, not per letter.
    return f"{escaped}(?<=[{char_class(bases)}]{escaped})" if bases else "(?!)"
