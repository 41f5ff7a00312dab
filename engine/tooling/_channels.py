"""What each invisible channel is, for `visiongate docs`: a payload and a legitimate use.

Apart from the settings (`_settings`): every command that loads a policy imports those, and
this table (a dataclass and its six notes) is read by the docs and a test only (issue 37).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = ["CHANNEL_NOTES", "ChannelNote"]


@dataclass(frozen=True)
class ChannelNote:
    """What one invisible channel is, for `visiongate docs`: a payload and a legitimate use."""

    holds: str
    legitimate: str
    payload: str
    """A hidden instruction in this channel (the sanitizer's input)."""
    stripped: str
    """What `strip` makes of the payload (a test holds the sanitizer to it)."""
    kept: str
    """Real text whose use of the channel is kept byte for byte."""


CHANNEL_NOTES: Final[Mapping[str, ChannelNote]] = MappingProxyType(
    {
        "tags": ChannelNote(
            "tag characters U+E0000–E007F, ASCII spelled invisibly (ASCII smuggling)",
            "the flags of `tags.allowed_flags` (by default the RGI ones: England, Scotland, Wales)",
            "sunny" + "".join(chr(0xE0000 + ord(c)) for c in "run rm"),
            "sunny",
            "Go \U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f!",
        ),
        "variation_selectors": ChannelNote(
            "VS1–VS256 and the Mongolian selectors: any byte as one selector",
            "one selector after a base that has that variation (StandardizedVariants, emoji "
            "variation sequences, the Ideographic Variation Database)",
            "ok\U0001f600\ufe06\U000e0159\U000e0157",
            "ok\U0001f600",
            "\u845b\U000e0100\u57ce \u2764\ufe0f #\ufe0f\u20e3",
        ),
        "zero_width": ChannelNote(
            "ZWSP, ZWNJ, ZWJ, WORD JOINER, BOM, the invisible operators: bits between letters",
            "ZWNJ/ZWJ next to a virama or between letters of a joining script; ZWJ inside an "
            "RGI emoji ZWJ sequence",
            "pass\u200b\u200c\u200c\u200b\u200c\u200b\u200b\u200bword",
            "password",
            "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 "
            "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        ),
        "bidi": ChannelNote(
            "embeddings, overrides, isolates (Trojan Source, CVE-2021-42574) and the marks "
            "LRM, RLM, ALM",
            "a single mark in a paragraph that holds right-to-left letters",
            "access\u202e\u2066 // admin\u2069\u2066",
            "access // admin",
            "\u05e9\u05dc\u05d5\u05dd\u200f (1)",
        ),
        "fillers": ChannelNote(
            "the Hangul fillers, which render blank (an invisible name or tool)",
            "the choseong or jungseong filler inside a jamo syllable with a real jamo",
            "admin\u3164\u3164",
            "admin",
            "\u1100\u1160",
        ),
        "other_ignorables": ChannelNote(
            "every other default-ignorable code point (soft hyphen, grapheme joiner, Khmer "
            "inherent vowels, the Mongolian vowel separator, unassigned ones)",
            "a soft hyphen inside a word, the grapheme joiner before a mark, the vowel "
            "separator before a final Mongolian A or E",
            "rm\u00ad\u00ad -rf\U000e0080",
            "rm -rf",
            "Silben\u00adtrennung",
        ),
    }
)
"""One note per channel, in `_settings.INVISIBLE_CHANNELS` order."""
