"""Character-level cleaning of untrusted text: tag characters, optionally bidi and zero-width.

`clean_text` is a pure function of the text and the compiled rules; it returns the cleaned text
and what it removed. `Sanitizer` (in `_sanitize.py`) adds the tally per surface.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from visiongate.engine import SanitizeSettings

__all__ = [
    "BIDI_CONTROLS",
    "BLACK_FLAG",
    "CANCEL_TAG",
    "JOINERS",
    "ZERO_WIDTH",
    "Counts",
    "TextRules",
    "clean_text",
    "compile_text_rules",
    "tag_sequence",
]

BLACK_FLAG: Final = "\U0001f3f4"
"""WAVING BLACK FLAG, the base of every valid emoji tag sequence (UTS #51 Annex C)."""
CANCEL_TAG: Final = "\U000e007f"
"""Ends an emoji tag sequence."""

BIDI_CONTROLS: Final = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Embeddings, overrides and isolates: the nine controls Trojan Source (CVE-2021-42574) abuses.

The implicit marks LRM, RLM and ALM (U+200E, U+200F, U+061C) are not here: they cannot reorder
a run by themselves, and right-to-left text needs them to place punctuation correctly.
"""
ZERO_WIDTH: Final = "\u200b\u2060\u2061\u2062\u2063\u2064\ufeff"
"""Removed wherever they stand: ZWSP, word joiner, invisible math operators, BOM/ZWNBSP."""
JOINERS: Final = "\u200c\u200d"
"""ZWNJ and ZWJ: kept where a script or an emoji sequence needs them (see `_joiner_is_needed`)."""

_TAG_RUN: Final = re.compile("[\U000e0000-\U000e007f]+")
_FLAG_THEN_TAG: Final = re.compile("\U0001f3f4[\U000e0000-\U000e007f]")
_BIDI_RUN: Final = re.compile(f"[{BIDI_CONTROLS}]+")
_ZERO_WIDTH_RUN: Final = re.compile(f"[{ZERO_WIDTH}]+")
_JOINER: Final = re.compile(f"[{JOINERS}]")
# UTF-16 writes every tag character as a surrogate pair whose high half is U+DB40.
_TAG_HIGH_SURROGATE: Final = "\udb40".encode("utf-16-le", "surrogatepass")
_VIRAMA: Final = 9
"""Canonical combining class of virama signs."""

# Scripts whose letters join or form conjuncts, where ZWNJ/ZWJ change the rendered word
# (Persian "می‌خواهم", Devanagari half forms): Arabic and its supplements, Syriac, N'Ko,
# Mandaic, the Brahmic blocks from Devanagari to Sinhala, Mongolian, Phags-pa, Arabic
# presentation forms, Hanifi Rohingya and the Sogdian/Old Uyghur group. Other Brahmic scripts
# are covered by the virama rule.
_JOINING_SCRIPT_RANGES: Final = (
    (0x0600, 0x08FF),
    (0x0900, 0x0DFF),
    (0x1800, 0x18AF),
    (0xA840, 0xA87F),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFF),
    (0x10D00, 0x10D3F),
    (0x10F30, 0x10FFF),
)

Counts = tuple[tuple[str, int], ...]
"""What one call removed or kept, as (kind, count) pairs with count > 0."""


@dataclass(frozen=True)
class TextRules:
    """The compiled text part of the `sanitize` settings."""

    allowed_flags_pattern: re.Pattern[str]
    """Matches an allowed flag whole (U+1F3F4, its tag characters, CANCEL TAG), as a group."""
    strip_bidi: bool
    strip_zero_width: bool
    optional_chars: str
    """The bidi and zero-width characters switched on, for the fast check."""


def tag_sequence(tag_text: str) -> str:
    """The tag characters spelling `tag_text`, plus CANCEL TAG (`gbeng` → U+E0067 … U+E007F)."""
    if not tag_text or not all(" " <= char <= "~" for char in tag_text):
        raise ValueError(f"allowed flag tag `{tag_text}` is not printable ascii")
    return "".join(chr(0xE0000 + ord(char)) for char in tag_text) + CANCEL_TAG


@lru_cache(maxsize=16)
def compile_text_rules(settings: SanitizeSettings) -> TextRules:
    """Compile once per settings value; a `Sanitizer` per decision then costs nothing."""
    optional = (BIDI_CONTROLS if settings.strip_bidi else "") + (
        ZERO_WIDTH + JOINERS if settings.strip_zero_width else ""
    )
    flags = [re.escape(BLACK_FLAG + tag_sequence(tag)) for tag in settings.allowed_flag_tags]
    return TextRules(
        # `(?!)` never matches: with no allowed flag, every sequence is stripped.
        allowed_flags_pattern=re.compile(f"({'|'.join(flags) or '(?!)'})"),
        strip_bidi=settings.strip_bidi,
        strip_zero_width=settings.strip_zero_width,
        optional_chars=optional,
    )


def clean_text(text: str, rules: TextRules) -> tuple[str, Counts]:
    """Strip what `rules` forbid; `text` itself comes back when nothing was removed."""
    if text.isascii():
        return text, ()
    may_hold_tags = _may_hold_tags(text)
    if not may_hold_tags and not any(char in text for char in rules.optional_chars):
        return text, ()
    counts: list[tuple[str, int]] = []
    cleaned = _strip_tags(text, rules, counts) if may_hold_tags else text
    if rules.strip_bidi:
        cleaned = _strip_run(cleaned, _BIDI_RUN, "bidi_controls", counts)
    if rules.strip_zero_width:
        cleaned = _strip_zero_width(cleaned, counts)
    # Only removals happen above, so an equal length means an equal string.
    return (text if len(cleaned) == len(text) else cleaned), tuple(counts)


def _may_hold_tags(text: str) -> bool:
    # Encoding is a C-speed copy and the bytes search is memchr-fast: on text without astral
    # characters (accents, curly quotes, CJK) this decides many times faster than a regex scan.
    # A hit at an odd offset or a lone surrogate is a false alarm that only costs the exact pass.
    encoded = text.encode("utf-16-le", "surrogatepass")
    return len(encoded) != 2 * len(text) and _TAG_HIGH_SURROGATE in encoded


def _strip_tags(text: str, rules: TextRules, counts: list[tuple[str, int]]) -> str:
    if BLACK_FLAG not in text:
        return _strip_run(text, _TAG_RUN, "tag_chars", counts)
    # Split around the allowed flags (kept whole) and strip every tag run in between, so the
    # work in Python is per allowed flag, not per tag run.
    pieces = rules.allowed_flags_pattern.split(text)
    pieces[::2] = [_TAG_RUN.sub("", piece) for piece in pieces[::2]]
    cleaned = "".join(pieces)
    kept = len(pieces) // 2
    # Any other flag followed by tags is a payload framed like a flag: its tags went above,
    # the black flag stays.
    smuggled = len(_FLAG_THEN_TAG.findall(text)) - kept
    _count(counts, "tag_chars", len(text) - len(cleaned))
    _count(counts, "smuggled_flags", smuggled)
    _count(counts, "flags_kept", kept)
    return cleaned


def _strip_zero_width(text: str, counts: list[tuple[str, int]]) -> str:
    # Joiners are judged on the text left after the unconditional removals, so a kept joiner's
    # neighbours survive too and a second pass keeps it again (idempotence).
    without = _ZERO_WIDTH_RUN.sub("", text)
    if any(joiner in without for joiner in JOINERS):
        without = _JOINER.sub(_joiner_replacement, without)
    _count(counts, "zero_width", len(text) - len(without))
    return without


def _joiner_replacement(match: re.Match[str]) -> str:
    return match.group() if _joiner_is_needed(match.string, match.start()) else ""


def _joiner_is_needed(text: str, index: int) -> bool:
    """ZWJ/ZWNJ at `index` is kept after a virama, inside an emoji ZWJ sequence, or between
    letters of a joining script; the virama case is IDNA's CONTEXTJ rule (RFC 5892 A.1/A.2)."""
    before = text[index - 1] if index else ""
    after = text[index + 1 : index + 2]
    if not before:
        return False
    if unicodedata.combining(before) == _VIRAMA:
        return True
    if not after:
        return False
    if text[index] == "\u200d" and _ends_emoji(before) and _is_pictographic(after):
        return True
    return _joining_script_letter(before) and _joining_script_letter(after)


def _is_pictographic(char: str) -> bool:
    # Python's Unicode tables lack Extended_Pictographic; symbols (So), the pictographic planes
    # (so emoji newer than those tables still count) and LEFT RIGHT ARROW (Sm, used in 🙂‍↔️)
    # cover every RGI ZWJ sequence.
    code = ord(char)
    return 0x1F000 <= code <= 0x1FAFF or code == 0x2194 or unicodedata.category(char) == "So"


def _ends_emoji(char: str) -> bool:
    """Whether an emoji ends in `char`: a pictograph, a skin-tone modifier or VS16."""
    return char == "\ufe0f" or _is_pictographic(char)


def _joining_script_letter(char: str) -> bool:
    code = ord(char)
    in_script = any(low <= code <= high for low, high in _JOINING_SCRIPT_RANGES)
    return in_script and unicodedata.category(char)[0] in "LM"


def _strip_run(
    text: str, pattern: re.Pattern[str], kind: str, counts: list[tuple[str, int]]
) -> str:
    cleaned = pattern.sub("", text)
    _count(counts, kind, len(text) - len(cleaned))
    return cleaned


def _count(counts: list[tuple[str, int]], kind: str, count: int) -> None:
    if count:
        counts.append((kind, count))
