"""Character-level cleaning of untrusted text: every invisible channel, per the policy's modes.

`clean_text` is a pure function of the text and the compiled rules; it returns the cleaned text
and what it removed, kept as legitimate, or flagged. `Sanitizer` (in `_sanitizer.py`) adds the
tally per surface. What counts as invisible and as legitimate is `_invisible`'s model.

The work is shaped by what real text holds. Text with no invisible character at all (nearly
all of it) costs one search. Text whose invisible characters can have no legitimate use there
(smuggled runs, a payload woven between letters) is cleaned in bulk, at C speed. Only text with
a character that may be legitimate (a joiner, a selector, a mark, a flag) is walked run by run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import regex

from visiongate.engine._settings import INVISIBLE_CHANNELS, InvisibleMode, SanitizeSettings

from ._invisible import (
    BLACK_FLAG,
    CANCEL_TAG,
    CONTEXTUAL,
    ZWJ,
    channel_chars,
    channel_of,
    char_class,
    emoji_zwj_sequences,
    is_legitimate_single,
    table_codes,
)

__all__ = [
    "BLACK_FLAG",
    "CANCEL_TAG",
    "KEPT_KIND",
    "REMOVED_KIND",
    "Counts",
    "TextRules",
    "clean_text",
    "compile_text_rules",
    "tag_sequence",
]

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

# The fastest test for "any invisible character" there is: the regex module looks the
# property up in its own tables, faster than `re` tests a class of ranges (bench_sanitize.py).
_ANY_INVISIBLE: Final = regex.compile(r"\p{Default_Ignorable_Code_Point}")
_VARIATION_SELECTOR_16: Final = "\ufe0f"

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
    runs: re.Pattern[str]
    """A tag sequence, an emoji ZWJ sequence, or a run of active characters (first pass)."""
    singles: re.Pattern[str]
    """An emoji ZWJ sequence or an active character that may be legitimate (second pass)."""
    may_be_legitimate: re.Pattern[str] | None
    """A character that may be a legitimate use (or a flag's base); None when the text can
    never be cleaned in bulk (a channel is `flag`)."""
    bulk_run: re.Pattern[str]
    channel_runs: tuple[tuple[str, re.Pattern[str]], ...]
    """Per active channel, a run of its characters: counts what bulk cleaning removed."""
    everything_active: bool
    strip_tags: bool

    @property
    def inert(self) -> bool:
        """Whether every channel is `keep`: nothing to look at."""
        return not self.channel_runs


def tag_sequence(tag_text: str) -> str:
    """The tag characters spelling `tag_text`, plus CANCEL TAG (`gbeng` → U+E0067 … U+E007F)."""
    if not tag_text or not all(" " <= char <= "~" for char in tag_text):
        raise ValueError(f"allowed flag tag `{tag_text}` is not printable ascii")
    return "".join(chr(0xE0000 + ord(char)) for char in tag_text) + CANCEL_TAG


@lru_cache(maxsize=16)
def compile_text_rules(settings: SanitizeSettings) -> TextRules:
    """Compile once per settings value; a `Sanitizer` per decision then costs nothing."""
    modes = {channel: settings.mode(channel) for channel in INVISIBLE_CHANNELS}
    active_channels = [channel for channel, mode in modes.items() if mode != "keep"]
    active = frozenset().union(*(channel_chars(channel) for channel in active_channels))
    active_class = char_class(active) or "(?!)"
    flags = [re.escape(BLACK_FLAG + tag_sequence(tag)) for tag in settings.allowed_flag_tags]
    return TextRules(
        modes=modes,
        # `(?!)` never matches: with no allowed flag, every sequence is stripped.
        allowed_flags=re.compile("|".join(flags) or "(?!)"),
        active=re.compile(f"[{active_class}]"),
        runs=re.compile(_runs_pattern(modes, active_class)),
        singles=re.compile(_singles_pattern(modes, active)),
        may_be_legitimate=_may_be_legitimate(modes, active),
        bulk_run=re.compile(f"[{active_class}]+"),
        channel_runs=tuple(
            (channel, re.compile(f"[{char_class(channel_chars(channel))}]+"))
            for channel in _by_likelihood(active_channels)
        ),
        everything_active=len(active_channels) == len(INVISIBLE_CHANNELS),
        strip_tags=modes["tags"] == "strip",
    )


def _runs_pattern(modes: dict[str, InvisibleMode], active_class: str) -> str:
    parts = [f"(?P<run>[{active_class}]+)"]
    if modes["zero_width"] != "keep":
        parts.insert(0, f"(?P<emoji>{_emoji_sequence()})")
    if modes["tags"] != "keep":
        parts.insert(0, f"(?P<flag>{re.escape(BLACK_FLAG)}[{char_class(channel_chars('tags'))}]+)")
    return "|".join(parts)


def _singles_pattern(modes: dict[str, InvisibleMode], active: frozenset[int]) -> str:
    # Alone between visible characters: a run the first pass kept (a `flag` channel's) is not
    # judged, or counted, twice.
    around = char_class(active)
    contextual = char_class(CONTEXTUAL & active) or "(?!)"
    single = f"(?<![{around}])(?P<run>[{contextual}])(?![{around}])"
    if modes["zero_width"] == "keep":
        return single
    return f"(?P<emoji>{_emoji_sequence()})|{single}"


def _emoji_sequence() -> str:
    """Emoji ZWJ sequence elements (a base, then VS16 or a skin tone) joined by single ZWJs."""
    tones = set(range(0x1F3FB, 0x1F400))
    base = char_class(table_codes("emoji.zwj_elements") - tones)
    element = f"[{base}](?:{re.escape(_VARIATION_SELECTOR_16)}|[{char_class(tones)}])?"
    return f"{element}(?:{ZWJ}{element})+"


def _may_be_legitimate(
    modes: dict[str, InvisibleMode], active: frozenset[int]
) -> re.Pattern[str] | None:
    if "flag" in modes.values():
        return None
    contextual = char_class(CONTEXTUAL & active)
    flag = re.escape(BLACK_FLAG) if modes["tags"] == "strip" else ""
    return re.compile(f"[{contextual}{flag}]") if contextual or flag else re.compile("(?!)")


def _by_likelihood(channels: Iterable[str]) -> list[str]:
    order = ("tags", "zero_width", "variation_selectors", "bidi", "fillers", "other_ignorables")
    return sorted(channels, key=order.index)


def clean_text(text: str, rules: TextRules) -> tuple[str, Counts]:
    """Strip what `rules` forbid; `text` itself comes back when nothing was removed."""
    if text.isascii() or rules.inert:
        return text, ()
    finder = _ANY_INVISIBLE if rules.everything_active else rules.active
    if finder.search(text) is None:
        return text, ()
    if rules.may_be_legitimate is not None and rules.may_be_legitimate.search(text) is None:
        return _bulk(text, rules)
    return _Walk(text, rules).run()


def _bulk(text: str, rules: TextRules) -> tuple[str, Counts]:
    """Every active character goes: none of them can be legitimate here."""
    if rules.strip_tags:
        ascii_only = _ascii_once_tags_go(text)
        if ascii_only is not None:
            return ascii_only
    removed = "".join(rules.bulk_run.findall(text))
    if not removed:
        return text, ()
    return rules.bulk_run.sub("", text), _channel_counts(removed, rules)


def _ascii_once_tags_go(text: str) -> tuple[str, Counts] | None:
    # The classic smuggling: ASCII prose with tag characters in it. Encoding to ASCII with
    # `ignore` drops them at C speed; it is right when they are all that is not ASCII.
    kept = text.encode("ascii", "ignore")
    encoded = text.encode("utf-8", "surrogatepass")
    tags = encoded.count(b"\xf3\xa0\x80") + encoded.count(b"\xf3\xa0\x81")
    if tags != len(text) - len(kept):
        return None
    return kept.decode("ascii"), (("tag_chars", tags),)


def _channel_counts(removed: str, rules: TextRules) -> Counts:
    counts: list[tuple[str, int]] = []
    remaining = removed
    for channel, run in rules.channel_runs:
        if not remaining:
            break
        rest = run.sub("", remaining)
        if len(rest) != len(remaining):
            counts.append((REMOVED_KIND[channel], len(remaining) - len(rest)))
        remaining = rest
    return tuple(counts)


class _Walk:
    """Two passes. The first strips every run of two or more invisible characters and every
    one that is never legitimate, and settles tag sequences; the second judges what is left
    (single characters, emoji ZWJ sequences) in the context the first pass left. A payload
    that lands inside an emoji sequence goes first, so the sequence is judged whole."""

    __slots__ = ("_counts", "_rules", "_text")

    def __init__(self, text: str, rules: TextRules) -> None:
        self._text = text
        self._rules = rules
        self._counts: dict[str, int] = {}

    def run(self) -> tuple[str, Counts]:
        original = self._text
        self._text = self._rules.runs.sub(self._first, original)
        cleaned = self._rules.singles.sub(self._second, self._text)
        counts = tuple((kind, count) for kind, count in self._counts.items() if count)
        # An equal length means nothing was removed, hence an equal string.
        return (original if len(cleaned) == len(original) else cleaned), counts

    def _add(self, kind: str, count: int = 1) -> None:
        self._counts[kind] = self._counts.get(kind, 0) + count

    def _first(self, match: re.Match[str]) -> str:
        if match.lastgroup == "flag":
            return self._flag(match.group())
        run = match.group()
        if match.lastgroup == "emoji" or (len(run) == 1 and ord(run) in CONTEXTUAL):
            return run  # judged by the second pass
        return self._dropped(run)

    def _second(self, match: re.Match[str]) -> str:
        if match.lastgroup == "emoji":
            return self._emoji(match.group(), match.start())
        return self._single(match.group(), match.start())

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
            self._add(KEPT_KIND["variation_selectors"], sequence.count(_VARIATION_SELECTOR_16))
            return sequence
        # Not an RGI sequence: its joiners go, each selector is judged where it stands.
        out = []
        for offset, char in enumerate(sequence):
            if char == ZWJ:
                out.append(self._dropped(char))
            elif char == _VARIATION_SELECTOR_16:
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
