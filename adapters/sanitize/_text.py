"""Character-level cleaning of untrusted text: every invisible channel, per the policy's modes.

`clean_text` is a pure function of the text and the compiled rules; it returns the cleaned text
and what it removed, kept as legitimate, or flagged. `Sanitizer` (in `_sanitizer.py`) adds the
tally per surface. What counts as invisible and as legitimate is `_invisible`'s model.

The work is shaped by what real text holds. Where the C scanner is built (`_bulk/_scan`), one
pass of it settles text with no invisible character at all (nearly all of it) and text whose
invisible characters can have no legitimate use anywhere; it steps aside at the first one that
might, and the Python paths serve, as they serve everything where it is not built. There, text
with no invisible character costs one look that proves it (`_screen`), mostly at C speed.
Text whose invisible characters can have no legitimate use there (smuggled runs, a payload
woven between letters, in any script) is cleaned in bulk on its UTF-8 bytes, at C speed,
with Python work once per kind of character present (`_utf8`). Only text with a character
that may be legitimate (a joiner, a selector, a mark, a flag) is walked run by run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

import regex

from visiongate.engine import INVISIBLE_CHANNELS, InvisibleMode, SanitizeSettings

from ._bulk._present import has_astral, is_sparse, present
from ._bulk._runs import lone_selectors, split_runs
from ._bulk._scan import ORDER, scanner_for
from ._bulk._tags import strip_tags
from ._bulk._utf8 import encoded
from ._flags import tag_sequence
from ._invisible import (
    BLACK_FLAG,
    CANCEL_TAG,
    CONTEXTUAL,
    VARIATION_SELECTOR_16,
    ZWJ,
    channel_chars,
    char_class,
    table_codes,
)
from ._screen import ANY_INVISIBLE, clean_until
from ._walk import FLAGGED_KIND, KEPT_KIND, REMOVED_KIND, Counts, TextRules, Walk
from ._words import cap_floods, may_flood

__all__ = [
    "BLACK_FLAG",
    "CANCEL_TAG",
    "FLAGGED_KIND",
    "FLOOD_KIND",
    "KEPT_KIND",
    "REMOVED_KIND",
    "Counts",
    "TextRules",
    "clean_text",
    "compile_text_rules",
    "tag_sequence",
]


FLOOD_KIND: Final = "combining_marks"
"""The tally's kind for the combining marks cut from a flood (more than 30 in a row)."""
_SKIN_TONES: Final = frozenset(range(0x1F3FB, 0x1F400))
_TAG_FIRST, _TAG_LAST = "\U000e0000", "\U000e007f"
_ASCII_AND_TAGS: Final = re.compile("[\x00-\x7f\U000e0000-\U000e007f]*")


@lru_cache(maxsize=16)
def compile_text_rules(settings: SanitizeSettings) -> TextRules:
    """Compile once per settings value; a `Sanitizer` per decision then costs nothing."""
    modes = {channel: settings.mode(channel) for channel in INVISIBLE_CHANNELS}
    active_channels = [channel for channel, mode in modes.items() if mode != "keep"]
    active = frozenset().union(*(channel_chars(channel) for channel in active_channels))
    never, contextual = active - CONTEXTUAL, active & CONTEXTUAL
    flags = [re.escape(BLACK_FLAG + tag_sequence(tag)) for tag in settings.allowed_flag_tags]
    tags = f"{re.escape(BLACK_FLAG)}[{char_class(channel_chars('tags'))}]+"
    with_flags = modes["tags"] != "keep"
    with_emoji = modes["zero_width"] != "keep"
    bases = table_codes("emoji.zwj_elements") - _SKIN_TONES if with_emoji else frozenset()
    return TextRules(
        modes=modes,
        # `(?!)` never matches: with no allowed flag, every sequence is stripped.
        allowed_flags=re.compile("|".join(flags) or "(?!)"),
        active=_class(active),
        flagged_chars=frozenset(
            chr(code)
            for channel, mode in modes.items()
            if mode == "flag"
            for code in channel_chars(channel)
        ),
        first=_first_finder(never, active),
        second=_class(contextual),
        emoji_elements=frozenset(map(chr, bases | _SKIN_TONES | {ord(VARIATION_SELECTOR_16)})),
        flag=re.compile(tags) if with_flags else None,
        emoji=re.compile(_emoji_sequence()) if with_emoji else None,
        active_run=re.compile(f"{_set(active)}*"),
        contextual_run=re.compile(f"{_set(contextual)}+"),
        may_be_legitimate=_may_be_legitimate(modes, active),
        bulk_run=re.compile(f"{_set(active)}+"),
        channel_runs=tuple(
            (channel, re.compile(f"[{char_class(channel_chars(channel))}]+"))
            for channel in _by_likelihood(active_channels)
        ),
        everything_active=len(active_channels) == len(INVISIBLE_CHANNELS),
        strip_tags=modes["tags"] == "strip",
        active_channels=tuple(active_channels),
        sweeps_selectors=modes["variation_selectors"] == "strip" and "flag" not in modes.values(),
        caps_floods="strip" in modes.values(),
        scanner=scanner_for(modes, _kind_of),
    )


def _kind_of(channel: str, mode: InvisibleMode) -> str:
    return FLAGGED_KIND[channel] if mode == "flag" else REMOVED_KIND[channel]


def _first_finder(starts: frozenset[int], active: frozenset[int]) -> re.Pattern[str]:
    """A character the first pass acts on: one of `starts`, or a contextual character that
    begins a run (another active character follows). One class first, so `re` scans for it
    at C speed, and the rest is decided in C too."""
    contextual = active & CONTEXTUAL
    either = _set(starts | contextual)
    if not contextual:
        return re.compile(either)
    return re.compile(f"{either}(?:(?<={_set(starts)})|(?={_set(active)}))")


def _set(codes: frozenset[int] | set[int]) -> str:
    """A character class of `codes`; an empty set matches nothing (`(?!)`)."""
    return f"[{char_class(codes)}]" if codes else "(?!)"


def _class(codes: frozenset[int] | set[int]) -> re.Pattern[str]:
    return re.compile(_set(codes))


def _emoji_sequence() -> str:
    """Emoji ZWJ sequence elements (a base, then VS16 or a skin tone) joined by single ZWJs."""
    base = char_class(table_codes("emoji.zwj_elements") - _SKIN_TONES)
    tone = char_class(_SKIN_TONES)
    element = f"[{base}](?:{re.escape(VARIATION_SELECTOR_16)}|[{tone}])?"
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
    return sorted(channels, key=ORDER.index)


def clean_text(text: str, rules: TextRules) -> tuple[str, Counts]:
    """Strip what `rules` forbid; `text` itself comes back when nothing was removed."""
    if text.isascii() or rules.inert:
        return text, ()
    if rules.caps_floods and may_flood(text):
        capped, cut = cap_floods(text)
        if cut:
            cleaned, counts = _invisible(capped, rules)
            return cleaned, (*counts, (FLOOD_KIND, cut))
    return _invisible(text, rules)


def _invisible(text: str, rules: TextRules) -> tuple[str, Counts]:
    if rules.scanner is not None:
        # One pass in C, which settles most text; it steps aside (None) at the first
        # character that needs its context judged, and the paths below start afresh.
        scanned = rules.scanner.clean(text)
        if scanned is not None:
            return scanned
    if rules.everything_active and rules.may_be_legitimate is not None:
        one_kind = _one_kind(text)
        if one_kind is not None:
            return one_kind
    elif present(text) is None:
        return text, ()
    start = clean_until(text)
    if start is None:
        return text, ()
    finder = ANY_INVISIBLE if rules.everything_active else rules.active
    first = finder.search(text, start)
    if first is None:
        return text, ()
    bulk = rules.may_be_legitimate is not None
    if bulk and rules.strip_tags and _TAG_FIRST <= first.group() <= _TAG_LAST:
        # Tag characters first: most likely ASCII smuggling, settled without another scan.
        ascii_only = _ascii_once_tags_go(text)
        if ascii_only is not None:
            return ascii_only
    runs = rules.everything_active and bulk
    split = split_runs(text) if runs else None
    if split is not None:
        cleaned, removed, only_tags = split
        return cleaned, (("tag_chars", len(removed)),) if only_tags else _channel_counts(
            removed, rules
        )
    if bulk and rules.may_be_legitimate.search(text) is None:  # type: ignore[union-attr]
        return _bulk(text, first.start(), rules)
    swept = rules.selector_sweep.sweep(text) if rules.selector_sweep is not None else None
    if swept is None:
        # The sweep steps aside where bases are dense (CJK, emoji): a selector after every
        # such letter is settled at C speed too when selectors are all the text hides.
        selectors = lone_selectors().clean(text) if runs and rules.sweeps_selectors else None
        if selectors is not None:
            return selectors[0], _selector_counts(*selectors[1:])
        return Walk(text, rules).run()
    cleaned, counts = Walk(swept.text, rules).run() if swept.walk else (swept.text, ())
    merged = dict(counts)
    for kind, count in (
        (REMOVED_KIND["variation_selectors"], swept.removed),
        (KEPT_KIND["variation_selectors"], swept.kept),
    ):
        if count:
            merged[kind] = merged.get(kind, 0) + count
    return cleaned, tuple(merged.items())


def _one_kind(text: str) -> tuple[str, Counts] | None:
    """Clean text, or text that hides one kind only, every channel stripping: tag characters
    (smuggled runs, or one after every letter) or standardized selectors (a bit after every
    letter). Settled at C speed, with the walk's outcome (see `_bulk`); None otherwise."""
    # The classic smuggling first: ASCII and tags (a look that stops at anything else).
    ascii_only = _ascii_once_tags_go(text)
    if ascii_only is not None:
        return ascii_only
    look = _first_look(text)
    if look is True:
        return text, ()
    if look is not False and _TAG_FIRST <= look.group() <= _TAG_LAST:
        return _tags_only(text)
    astral = has_astral(text)
    seen = present(text, astral)
    if seen is None:
        return text, ()
    if not seen.plane:
        return _tags_only(text)
    if seen.astral or not seen.plane <= _standardized():
        return None
    selectors = lone_selectors().clean(text, proven=True, astral=astral)
    return None if selectors is None else (selectors[0], _selector_counts(*selectors[1:]))


def _tags_only(text: str) -> tuple[str, Counts] | None:
    """Text whose first invisible character is a tag: settled when tags are all it hides
    and no flag's base is in it (no tag can be legitimate then)."""
    if BLACK_FLAG in text:
        return None
    # Smuggled runs: one search cuts the text at every run (bounded: a tag after every letter
    # stops it early), and tags only settles it.
    split = split_runs(text)
    if split is not None and split[2]:
        return split[0], (("tag_chars", len(split[1])),)
    tagless = strip_tags(text)
    if present(tagless) is not None:
        return None
    return tagless, (("tag_chars", len(text) - len(tagless)),)


def _first_look(text: str) -> regex.Match[str] | bool:
    """True when one cheap look proves `text` holds no invisible character: the drop of its
    ASCII part where that is most of it, or `regex`'s property search where the text has
    astral characters (emoji in Japanese: `present` would need two more scans), which finds
    the first invisible character otherwise. False: `present` looks (a charmap encoding,
    2 ns a character in any script)."""
    if is_sparse(text):
        return clean_until(text) is None
    if not has_astral(text[:_HEAD]):
        return False
    first = ANY_INVISIBLE.search(text)
    return True if first is None else first


_HEAD: Final = 1 << 12


@lru_cache(maxsize=1)
def _standardized() -> frozenset[str]:
    """VS1-VS16 and the Mongolian selectors: those the standardized variation sequences use."""
    return frozenset(chr(code) for code in channel_chars("variation_selectors") if code < 0xE0100)


def _selector_counts(removed: int, kept: int) -> Counts:
    counts = (
        (REMOVED_KIND["variation_selectors"], removed),
        (KEPT_KIND["variation_selectors"], kept),
    )
    return tuple((kind, count) for kind, count in counts if count)


def _bulk(text: str, start: int, rules: TextRules) -> tuple[str, Counts]:
    """Every active character goes: none of them can be legitimate here. On the UTF-8 bytes
    when the text has them (Python works once per kind of character present, not per
    character); else with a regex."""
    data = encoded(text)
    if data is None:
        return _bulk_per_match(text, rules)
    cleaned, removed = rules.bulk_bytes.strip(text, data, start)
    return cleaned, tuple(
        (REMOVED_KIND[channel], removed[channel]) for channel in _by_likelihood(removed)
    )


def _bulk_per_match(text: str, rules: TextRules) -> tuple[str, Counts]:
    removed = "".join(rules.bulk_run.findall(text))
    if not removed:
        return text, ()
    return rules.bulk_run.sub("", text), _channel_counts(removed, rules)


def _ascii_once_tags_go(text: str) -> tuple[str, Counts] | None:
    # The classic smuggling: ASCII prose with tag characters in it. Encoding to ASCII with
    # `ignore` drops them at C speed; it is right when they are all that is not ASCII.
    if _ASCII_AND_TAGS.fullmatch(text) is None:
        return None
    kept = text.encode("ascii", "ignore")
    return kept.decode("ascii"), (("tag_chars", len(text) - len(kept)),)


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
