"""How lanes are carried out (`execution`) and how untrusted output is cleaned (`sanitize`).

The engine parses and validates these sections; the adapters read them. They are plain
frozen values so an adapter never needs to look at the policy file itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, Literal

from ._vocabulary import SOURCES

TextAction = Literal["reference", "describe"]

EMBED_TARGET_DEFAULT: Final = 262_144
EMBED_TARGET_MIN: Final = 65_536
EMBED_TARGET_MAX: Final = 4_194_304


def clamp_embed_target(value: int) -> int:
    """Clamp a byte budget to [64 KiB, 4 MiB]."""
    return max(EMBED_TARGET_MIN, min(EMBED_TARGET_MAX, value))


TallImages = Literal["tile", "shrink", "text"]
TALL_IMAGES: Final = ("tile", "shrink", "text")
"""What the native lane does with a capture that the ceiling would shrink below legibility."""
LEGIBILITY_SCALE_DEFAULT: Final = 0.9
"""The lowest scale at which local OCR still read 90% of the words it read at 1:1 in 16 px body
text, the size full-page captures hold (`bench/bench_images.py --legibility`: 0.96 of the words
at 1:1, 0.88 at 0.9, 0.60 at 0.8, 0.07 at 0.5; text drawn at 2x kept 0.93 down to 0.5)."""


@dataclass(frozen=True)
class NativeSettings:
    """How the native lane attaches images."""

    max_images: int = 4
    """Images attached per tool result at most."""
    candidates: int = 16
    """Images tried per result at most; a refused one gives its slot to the next."""
    embed_target_bytes: int = EMBED_TARGET_DEFAULT
    """Budget per image, counted as the length of its base64 text."""
    max_edge_px: int = 1568
    """Pixel ceiling on the long edge."""
    tall_images: TallImages = "tile"
    """A tall or wide capture the ceiling would shrink below `legibility_scale`: `tile` sends
    overlapping tiles along its long axis (the rest goes the text lane's way), `shrink` sends
    it whole however small, `text` sends it the text lane's way."""
    legibility_scale: float = LEGIBILITY_SCALE_DEFAULT
    """Below this scale a capture's text is taken as illegible; tiles are never drawn smaller
    unless the short side itself needs it."""


@dataclass(frozen=True)
class ExecutionSettings:
    """The `execution` section: native settings (with per-source overrides) and text actions."""

    native: NativeSettings = field(default_factory=NativeSettings)
    native_by_source: Mapping[str, NativeSettings] = field(
        default_factory=lambda: MappingProxyType({})
    )
    text: Mapping[str, TextAction] = field(
        default_factory=lambda: MappingProxyType(
            {
                "mcp": "reference",
                "computer_use": "describe",
                "browser": "describe",
                "vision_analyze": "describe",
            }
        )
    )

    keep_recent_images: int | None = None
    """The history helper keeps at most this many images in a conversation, the most recent;
    older ones become their `MEDIA:` path and a note. None: the history is not bounded."""
    max_calls_per_image: int | None = None
    """The same image content is attached at most this many times in what a request carries;
    later attachments become a note. None: no limit."""

    def native_for(self, source: str, embed_target_bytes: int | None = None) -> NativeSettings:
        """Native settings for a source; an `embed_target_bytes` from the agent config wins."""
        settings = self.native_by_source.get(source, self.native)
        if embed_target_bytes is not None:
            settings = replace(settings, embed_target_bytes=clamp_embed_target(embed_target_bytes))
        return settings

    def text_action(self, source: str) -> TextAction:
        """`reference` or `describe` for a source in the text lane."""
        if source not in SOURCES:
            raise ValueError(f"unknown image source `{source}`")
        return self.text.get(source, "reference")


@dataclass(frozen=True)
class SanitizeSettings:
    """The `sanitize` section: what is stripped from untrusted tool output."""

    allowed_flag_tags: tuple[str, ...] = ("gbeng", "gbsct", "gbwls")
    """Tag text of the emoji tag sequences kept (U+1F3F4, these tag letters, U+E007F)."""
    strip_bidi: bool = False
    """Also strip bidi embedding/override/isolate controls (Trojan Source)."""
    strip_zero_width: bool = False
    """Also strip zero-width characters outside emoji/ZWJ sequences."""
    reserved_meta_labels: tuple[str, ...] = ("modelcontextprotocol", "mcp")
    """Labels that make a `_meta` key prefix reserved for the protocol."""
    reserved_meta_keys: tuple[str, ...] = (
        "progressToken",
        "traceparent",
        "tracestate",
        "baggage",
    )
    """Unprefixed `_meta` keys reserved for the protocol."""
