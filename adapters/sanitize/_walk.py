"""The walk over text that may hold legitimate invisible characters: two passes.

The first pass strips every run of two or more invisible characters (the whole run: a joiner
next to a hidden character is part of the payload) and every one that is never legitimate,
settles tag sequences, and steps over emoji ZWJ sequences. The second pass judges what is
left, single characters and emoji ZWJ sequences (RGI or not), in the context the first pass
left: a payload that lands inside an emoji sequence is gone, so the sequence is judged whole.

Both passes look for their next candidate with one character class (a C-speed scan) and do
Python work only there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from visiongate.engine import INVISIBLE_CHANNELS, InvisibleMode

from ._bulk._scan import Scanner
from ._bulk._selectors import SelectorSweep, sweep_for
from ._bulk._utf8 import Stripper, bulk_stripper
from ._invisible import (
    BLACK_FLAG,
    VARIATION_SELECTOR_16,
    ZWJ,
    channel_of,
    emoji_zwj_sequences,
    is_legitimate_single,
)

__all__ = ["FLAGGED_KIND", "KEPT_KIND", "REMOVED_KIND", "Counts", "TextRules", "Walk"]

REMOVED_KIND: Final = {
    "tags": "tag_chars",
    "variation_selectors": "variation_selectors",
    "zero_width": "zero_width",
    "bidi": "bidi_controls",
    "fillers": "fillers",
    "other_ignorables": "other_ignorables",
}
"""The tally's kind for the characters of a channel that were stripped."""
KEPT_KIND: Final = {channel: f"{channel}_kept" for channel in INVISIBLE_CHANNELS} | {
    "tags": "flags_kept"
}
"""The kind for legitimate uses kept (for `tags`: whole flags)."""
FLAGGED_KIND: Final = {channel: f"{channel}_flagged" for channel in INVISIBLE_CHANNELS}
"""The kind for characters a `flag` channel kept although they have no legitimate use."""

_Step = int | tuple[int, int, str]
"""What a pass does at a candidate: look on from there, or replace `text[start:end]`."""
_Act = Callable[[str, int, int], _Step]


Counts = tuple[tuple[str, int], ...]
"""What one call removed, kept or flagged, as (kind, count) pairs with count > 0."""


@dataclass(frozen=True)
class TextRules:
    """The compiled text part of the `sanitize` settings."""

    modes: dict[str, InvisibleMode]
    allowed_flags: re.Pattern[str]
    """Matches an allowed flag (U+1F3F4, its tag characters, CANCEL TAG) at the start."""
    active: re.Pattern[str]
    """One character of a channel that is not `keep`."""
    flagged_chars: frozenset[str]
    """Characters of `flag` channels: kept by the first pass, not judged again."""
    first: re.Pattern[str]
    """Where the first pass looks: a `never` character, or a contextual one a run begins with."""
    second: re.Pattern[str]
    """Where the second pass looks: a contextual character."""
    emoji_elements: frozenset[str]
    """What an emoji ZWJ sequence is made of besides its joiners."""
    flag: re.Pattern[str] | None
    emoji: re.Pattern[str] | None
    active_run: re.Pattern[str]
    contextual_run: re.Pattern[str]
    may_be_legitimate: re.Pattern[str] | None
    """A character that may be a legitimate use (or a flag's base); None when the text can
    never be cleaned in bulk (a channel is `flag`)."""
    bulk_run: re.Pattern[str]
    channel_runs: tuple[tuple[str, re.Pattern[str]], ...]
    """Per active channel, a run of its characters: counts what bulk cleaning removed."""
    everything_active: bool
    strip_tags: bool
    active_channels: tuple[str, ...]
    sweeps_selectors: bool
    """Whether selectors are stripped and no channel is `flag` (see `selector_sweep`)."""
    caps_floods: bool = True
    """Whether runs of more than 30 combining marks are cut (any channel strips)."""
    scanner: Scanner | None = None
    """The C scanner for these modes, tried first (None where it was not built)."""

    @property
    def bulk_bytes(self) -> Stripper:
        """Removes every active character from UTF-8 bytes, counted per channel (built on
        first use, which a process that never meets such a text does not pay)."""
        return bulk_stripper(self.active_channels)

    @property
    def selector_sweep(self) -> SelectorSweep | None:
        """Removes the selectors no context can make legitimate, before the walk; None unless
        `sweeps_selectors` (built on first use, likewise)."""
        return sweep_for(self.active_channels) if self.sweeps_selectors else None

    @property
    def inert(self) -> bool:
        """Whether every channel is `keep`: nothing to look at."""
        return not self.channel_runs


class Walk:
    """One text through both passes, with the counts of what each did."""

    __slots__ = ("_counts", "_rules", "_text")

    def __init__(self, text: str, rules: TextRules) -> None:
        self._text = text
        self._rules = rules
        self._counts: dict[str, int] = {}

    def run(self) -> tuple[str, Counts]:
        original = self._text
        self._text = self._first_pass(original)
        cleaned = self._second_pass(self._text)
        counts = tuple((kind, count) for kind, count in self._counts.items() if count)
        # An equal length means nothing was removed, hence an equal string.
        return (original if len(cleaned) == len(original) else cleaned), counts

    def _first_pass(self, text: str) -> str:
        return self._scan(text, self._rules.first, self._first_at)

    def _second_pass(self, text: str) -> str:
        return self._scan(text, self._rules.second, self._second_at)

    @staticmethod
    def _scan(text: str, finder: re.Pattern[str], act: _Act) -> str:
        """`text` with each candidate `finder` finds handled by `act`: a replacement of
        `text[start:end]`, or where to look next (nothing replaced)."""
        pieces: list[str] = []
        last = pos = 0
        while (hit := finder.search(text, pos)) is not None:
            step = act(text, hit.start(), last)
            if isinstance(step, int):
                pos = step
                continue
            start, end, kept = step
            pieces += [text[last:start], kept]
            last = pos = end
        pieces.append(text[last:])
        return "".join(pieces)

    def _first_at(self, text: str, index: int, last: int) -> _Step:
        sequence = self._emoji_around(text, index, last)
        if sequence is not None:
            return sequence.end()  # judged whole by the second pass
        flag = self._flag_at(text, index - 1) if index > last else None
        after = flag.end() if flag else index
        # A `never` character, or a contextual one that begins a run: the run goes. What
        # follows a flag's tags straight away is part of their run, not legitimate.
        end = self._rules.active_run.match(text, after).end()  # type: ignore[union-attr]
        kept = self._flag(flag.group()) if flag else ""
        return (flag.start() if flag else index), end, kept + self._dropped(text[after:end])

    def _second_at(self, text: str, index: int, last: int) -> _Step:
        sequence = self._emoji_around(text, index, last)
        if sequence is not None:
            return sequence.start(), sequence.end(), self._emoji(sequence.group(), sequence.start())
        end = self._rules.contextual_run.match(text, index).end()  # type: ignore[union-attr]
        if end - index > 1 or self._next_to_kept(text, index, end):
            # The first pass took every run; one still here is a `flag` channel's, kept and
            # counted there.
            return end
        return index, end, self._single(text[index], index)

    def _emoji_around(self, text: str, index: int, floor: int) -> re.Match[str] | None:
        """The emoji ZWJ sequence the joiner or selector at `index` belongs to, if any: its
        elements before `index` are a base and at most a selector or skin tone."""
        rules = self._rules
        if rules.emoji is None or text[index] not in (ZWJ, VARIATION_SELECTOR_16):
            return None
        # Nearest start first: a base right before, or a base and its selector or skin tone.
        for start in range(index - 1, max(floor, index - 3) - 1, -1):
            if text[start] not in rules.emoji_elements:
                break
            sequence = rules.emoji.match(text, start)
            if sequence is not None and sequence.end() > index:
                return sequence
        return None

    def _flag_at(self, text: str, index: int) -> re.Match[str] | None:
        flag = self._rules.flag
        return flag.match(text, index) if flag is not None and text[index] == BLACK_FLAG else None

    def _next_to_kept(self, text: str, start: int, end: int) -> bool:
        flagged = self._rules.flagged_chars
        if not flagged:
            return False
        before = start > 0 and text[start - 1] in flagged
        return before or (end < len(text) and text[end] in flagged)

    def _add(self, kind: str, count: int = 1) -> None:
        self._counts[kind] = self._counts.get(kind, 0) + count

    def _flag(self, sequence: str) -> str:
        allowed = self._rules.allowed_flags.match(sequence)
        if allowed:
            self._add("flags_kept")
            return allowed.group() + self._dropped(sequence[allowed.end() :])
        rest = self._dropped(sequence[1:])
        if len(rest) < len(sequence) - 1:
            self._add("smuggled_flags")
        return BLACK_FLAG + rest

    def _emoji(self, sequence: str, start: int) -> str:
        if sequence in emoji_zwj_sequences():
            self._add(KEPT_KIND["zero_width"], sequence.count(ZWJ))
            self._add(KEPT_KIND["variation_selectors"], sequence.count(VARIATION_SELECTOR_16))
            return sequence
        # Not an RGI sequence: its joiners go, each selector is judged where it stands.
        out = []
        for offset, char in enumerate(sequence):
            if char == ZWJ:
                out.append(self._dropped(char))
            elif char == VARIATION_SELECTOR_16:
                out.append(self._single(char, start + offset))
            else:
                out.append(char)
        return "".join(out)

    def _single(self, char: str, index: int) -> str:
        channel = channel_of(char)
        if channel is None or self._rules.modes[channel] == "keep":
            return char
        if is_legitimate_single(self._text, index):
            self._add(KEPT_KIND[channel])
            return char
        return self._dropped(char)

    def _dropped(self, run: str) -> str:
        """`run` without its characters of `strip` channels; `flag` channels' are counted."""
        kept = []
        for char in run:
            channel = channel_of(char)
            if channel is None:
                kept.append(char)
                continue
            mode = self._rules.modes[channel]
            if mode == "strip":
                self._add(REMOVED_KIND[channel])
            else:
                kept.append(char)
                if mode == "flag":
                    self._add(FLAGGED_KIND[channel])
        return "".join(kept)
