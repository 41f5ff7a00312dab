"""Variation selectors with no possible use, removed in bulk before the walk (issue 37).

A selector is legitimate only right after a base that has that variation, and only alone: the
walk judges each one in Python, which is what a payload of one selector after every letter
exploits (1-3 MB/s). Most such selectors can be settled without it. The walk's first pass
strips every run of two or more invisible characters and leaves a lone one, and its neighbours,
as they are; its second pass judges a lone selector by the character before it. So a selector
can only be kept, or need the walk, where a "context" character stands next to its run of
selectors: a base of a variation of its kind, an emoji element (a sequence is judged whole),
or another invisible character (which makes the run a mixed one). Context characters are rare
in the texts this is for (one search at C speed finds them, the astral ones by a second); the
runs next to them are left for the walk, and every other selector is removed on the UTF-8
bytes (`_utf8`). The walk then sees only the rest, with the same outcome.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ._invisible import (
    VARIATION_SELECTOR_16,
    channel_chars,
    char_class,
    has_variation,
    table_codes,
    variation_bases,
)
from ._utf8 import Stripper, encoded, stripper

__all__ = [
    "SelectorSweep",
    "Swept",
    "marked_for_keeping",
    "placeholder",
    "selector_sweep",
    "sweep_for",
]

_MOST_CONTEXTS = 16
"""Beyond one context character in this many, the text is not worth sweeping (every letter
of CJK text is a base of some ideographic variation): the walk has it whole."""
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_ZWJ = "\u200d"
_PRIVATE_FIRST = 0xF0000
"""Placeholders for the selectors kept, in a private-use plane: a text holding any of them is
left to the walk."""
_PRIVATE = re.compile("[\U000f0000-\U000f01ff]")


@dataclass(frozen=True)
class Swept:
    """What the sweep did to a text."""

    text: str
    removed: int
    kept: int
    """Selectors it judged legitimate itself (alone after a base of that variation), when
    the walk does not follow."""
    walk: bool
    """Whether the text still needs the walk (it has other active characters, or selectors
    next to them or to an emoji element)."""


@dataclass(frozen=True)
class SelectorSweep:
    """Removes the selectors of a text that no context can make legitimate."""

    selectors: frozenset[str]
    ideographic: re.Pattern[str]
    """An ideographic selector (VS17-VS256)."""
    plane_contexts: dict[tuple[bool, bool], re.Pattern[str]]
    """A context character of the Basic Multilingual Plane, with or without the ideographic
    bases and the emoji elements (a class of that plane only is a bitmap to `re`: fast)."""
    astral_contexts: dict[tuple[bool, bool], frozenset[str]]
    """The astral context characters, likewise."""
    for_the_walk: tuple[frozenset[str], frozenset[str]]
    """Context characters whose selectors the walk judges: the active characters other than
    selectors, and (in text with a ZWJ, where emoji sequences can be) the emoji elements."""
    stripper: Stripper
    most_contexts: int = _MOST_CONTEXTS
    """Beyond one context character in this many, the sweep steps aside (0: never)."""

    def sweep(self, text: str) -> Swept | None:
        """The text without those selectors; None when none went (or the text is not worth
        it, or has a lone surrogate, or a character in the sweep's private range)."""
        contexts = self._contexts(text)
        if contexts is None or _PRIVATE.search(text) is not None:
            return None
        walked, judged = self._runs_next_to(text, contexts, self.for_the_walk[_ZWJ in text])
        keep = {index: text[index] for index in walked}
        keep.update((index, text[index]) for index, legitimate in judged.items() if legitimate)
        marked = marked_for_keeping(text, keep)
        data = encoded(marked)
        if data is None:
            return None
        cleaned, counts = self.stripper.strip(marked, data)
        removed = sum(counts.values())
        if not removed:
            return None
        for selector in set(keep.values()):
            cleaned = cleaned.replace(placeholder(selector), selector)
        walk = bool(walked) or self._has_walked(text, contexts, self.for_the_walk[_ZWJ in text])
        # The walk counts what it keeps, those judged here included: it judges them again.
        return Swept(cleaned, removed, 0 if walk else len(keep) - len(walked), walk)

    def _contexts(self, text: str) -> list[int] | None:
        # Without a ZWJ no emoji sequence can form: an emoji element is a base like another.
        kind = (self.ideographic.search(text) is not None, _ZWJ in text)
        found = [hit.start() for hit in self.plane_contexts[kind].finditer(text)]
        astral = self.astral_contexts[kind]
        found += [hit.start() for hit in _ASTRAL.finditer(text) if hit.group() in astral]
        return None if len(found) * self.most_contexts > len(text) else found

    def _runs_next_to(
        self, text: str, contexts: list[int], for_the_walk: frozenset[str]
    ) -> tuple[set[int], dict[int, bool]]:
        """The selectors the walk must judge (in a run right after a context character it
        judges, or right before an active one), and the verdict on each lone selector right
        after a base."""
        walked: set[int] = set()
        lone: dict[int, bool] = {}
        for index in contexts:
            run = self._run(text, index + 1, 1)
            if text[index] in for_the_walk:
                walked.update(run)
                walked.update(self._run(text, index - 1, -1))
            elif len(run) == 1:
                lone[run[0]] = has_variation(text[index], text[run[0]])
        # A lone selector whose next character is active goes to the walk with its run.
        return walked, {index: verdict for index, verdict in lone.items() if index not in walked}

    def _run(self, text: str, index: int, step: int) -> list[int]:
        run = []
        while 0 <= index < len(text) and text[index] in self.selectors:
            run.append(index)
            index += step
        return run

    @staticmethod
    def _has_walked(text: str, contexts: list[int], for_the_walk: frozenset[str]) -> bool:
        return any(text[index] in for_the_walk for index in contexts)


def marked_for_keeping(text: str, keep: dict[int, str]) -> str:
    """`text` with the selectors to keep swapped for placeholders the stripper leaves."""
    pieces, last = [], 0
    for index in sorted(keep):
        pieces += [text[last:index], placeholder(keep[index])]
        last = index + 1
    pieces.append(text[last:])
    return "".join(pieces)


def placeholder(selector: str) -> str:
    code = ord(selector)
    if code >= 0xE0100:  # VS17-VS256
        return chr(_PRIVATE_FIRST + 0x20 + code - 0xE0100)
    if code >= 0xFE00:  # VS1-VS16
        return chr(_PRIVATE_FIRST + code - 0xFE00)
    return chr(_PRIVATE_FIRST + 0x10 + code - 0x180B)  # the Mongolian selectors


def selector_sweep(
    selectors: frozenset[int],
    bases: tuple[frozenset[int], frozenset[int]],
    emoji: frozenset[int],
    active: frozenset[int],
    stripper: Stripper,
) -> SelectorSweep:
    """A sweep over `selectors` in text whose `active` characters are stripped; `bases` are
    what a standardized and an ideographic selector may follow, `emoji` what emoji sequences
    are made of."""
    # A selector is never a context itself: it is part of its run (VS16 is an emoji element).
    others, emoji = active - selectors, emoji - selectors
    contexts = {
        (wide, zwj): (bases[0] | (bases[1] if wide else set()) | others | (emoji if zwj else set()))
        - selectors
        for wide in (False, True)
        for zwj in (False, True)
    }
    ideographic = [code for code in selectors if code >= 0xE0100]
    return SelectorSweep(
        selectors=frozenset(map(chr, selectors)),
        ideographic=re.compile(f"[{char_class(ideographic)}]"),
        plane_contexts={kind: _plane(codes) for kind, codes in contexts.items()},
        astral_contexts={kind: _astral(codes) for kind, codes in contexts.items()},
        for_the_walk=(frozenset(map(chr, others)), frozenset(map(chr, others | emoji))),
        stripper=stripper,
    )


def _plane(codes: frozenset[int]) -> re.Pattern[str]:
    return re.compile(f"[{char_class(code for code in codes if code < 0x10000)}]")


def _astral(codes: frozenset[int]) -> frozenset[str]:
    return frozenset(chr(code) for code in codes if code >= 0x10000)


@lru_cache(maxsize=16)
def sweep_for(channels: tuple[str, ...]) -> SelectorSweep:
    """The sweep for text whose `channels` are stripped (built on first use: about 50 ms)."""
    active = frozenset().union(*(channel_chars(channel) for channel in channels))
    selectors = channel_chars("variation_selectors")
    # And what an emoji ZWJ sequence is made of: the walk judges a selector there as a whole.
    tones = frozenset(range(0x1F3FB, 0x1F400))
    emoji = table_codes("emoji.zwj_elements") | tones | {ord(VARIATION_SELECTOR_16)}
    bases = (variation_bases(False), variation_bases(True))
    only = stripper({"variation_selectors": selectors}, re.compile(f"[{char_class(selectors)}]"))
    return selector_sweep(selectors, bases, emoji, active, only)
