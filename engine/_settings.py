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
UserOnly = Literal["pass", "reference", "withhold"]

EMBED_TARGET_DEFAULT: Final = 262_144
EMBED_TARGET_MIN: Final = 65_536
EMBED_TARGET_MAX: Final = 4_194_304


EMBED_TARGET_HELP: Final = (
    f"write a whole number of bytes between {EMBED_TARGET_MIN} and {EMBED_TARGET_MAX}"
)


def clamp_embed_target(value: int) -> int:
    """Clamp a byte budget to [64 KiB, 4 MiB]."""
    return max(EMBED_TARGET_MIN, min(EMBED_TARGET_MAX, value))


def clamped_message(value: int, clamped: int) -> str:
    """What a clamped byte budget says, in a policy or an agent config."""
    bound = "smallest" if clamped > value else "largest"
    return (
        f"`{value}` is outside the byte budgets the native lane takes, "
        f"clamped to the {bound}, {clamped}"
    )


TallImages = Literal["tile", "shrink", "text"]
TALL_IMAGES: Final = ("tile", "shrink", "text")
"""What the native lane does with a capture that the ceiling would shrink below legibility."""
LEGIBILITY_SCALE_DEFAULT: Final = 0.9
"""The lowest scale at which local OCR still read 90% of the words it read at 1:1 in 16 px body
text, the size full-page captures hold (`bench/bench_images.py --legibility`: 0.96 of the words
at 1:1, 0.88 at 0.9, 0.60 at 0.8, 0.07 at 0.5; text drawn at 2x kept 0.93 down to 0.5)."""
LoneImage = Literal["slot", "turn"]
LONE_IMAGES: Final = ("slot", "turn")
"""The room a tool result's only image is fitted in: one slot's budget, or the turn's."""


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
    lone_image: LoneImage = "slot"
    """The room of an image with no other left to attach in its result: `slot` fits it in
    `embed_target_bytes` like any image, `turn` in the budget of the slots still free (all
    `max_images` of them for a result's only image), within the route's own cap. Every later
    request re-sends what it got."""


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
    user_only: UserOnly = "pass"
    """Tool output annotated for the user only (`audience: ["user"]`): `pass` gives it to the
    MCP client with its annotations and the model only a note counting it; `reference` also
    gives the model the `MEDIA:` paths of its images; `withhold` leaves it out of what the
    client gets (for clients that hand the model everything, annotations or not)."""

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


InvisibleMode = Literal["strip", "keep", "flag"]
"""What the sanitizer does with one invisible channel: `strip` what has no legitimate use there
(the default), `keep` everything, or `flag` (keep, count and warn)."""

INVISIBLE_MODES: Final[tuple[InvisibleMode, ...]] = ("strip", "keep", "flag")
INVISIBLE_CHANNELS: Final = (
    "tags",
    "variation_selectors",
    "zero_width",
    "bidi",
    "fillers",
    "other_ignorables",
)
"""The channels of Default_Ignorable_Code_Point, in the order the docs and records list them."""
LEGACY_BOOLEAN_CHANNELS: Final = ("bidi", "zero_width")
"""Channels an older policy switched with a boolean (`true`: strip, `false`: keep)."""


@dataclass(frozen=True)
class SanitizeSettings:
    """The `sanitize` section: what is stripped from untrusted tool output."""

    allowed_flag_tags: tuple[str, ...] = ("gbeng", "gbsct", "gbwls")
    """Tag text of the emoji tag sequences kept (U+1F3F4, these tag letters, U+E007F): the RGI
    tag sequences of the emoji data unless the policy lists its own."""
    tags: InvisibleMode = "strip"
    """Tag characters (U+E0000–E007F): ASCII smuggling; legitimate in allowed flags only."""
    variation_selectors: InvisibleMode = "strip"
    """VS1–VS256 and the Mongolian selectors: one after a base that has that variation."""
    zero_width: InvisibleMode = "strip"
    """ZWSP, ZWNJ, ZWJ, word joiner, BOM, invisible operators: joiners where scripts and emoji
    sequences use them."""
    bidi: InvisibleMode = "strip"
    """Embeddings, overrides, isolates (Trojan Source) and marks: marks in right-to-left text."""
    fillers: InvisibleMode = "strip"
    """Hangul fillers, which render blank (invisible names): inside a jamo syllable only."""
    other_ignorables: InvisibleMode = "strip"
    """Every other default-ignorable code point: soft hyphens inside words, the grapheme joiner
    between marks, the Mongolian vowel separator before a final vowel; unassigned ones never."""
    reserved_meta_labels: tuple[str, ...] = ("modelcontextprotocol", "mcp")
    """Labels that make a `_meta` key prefix reserved for the protocol."""
    reserved_meta_keys: tuple[str, ...] = (
        "progressToken",
        "traceparent",
        "tracestate",
        "baggage",
    )
    """Unprefixed `_meta` keys reserved for the protocol."""

    def mode(self, channel: str) -> InvisibleMode:
        """The mode of one of `INVISIBLE_CHANNELS`."""
        if channel not in INVISIBLE_CHANNELS:
            raise ValueError(f"unknown invisible channel `{channel}`")
        mode: InvisibleMode = getattr(self, channel)
        return mode

    @property
    def strip_bidi(self) -> bool:
        """Whether bidi controls are stripped (the `bidi` channel is `strip`)."""
        return self.bidi == "strip"

    @property
    def strip_zero_width(self) -> bool:
        """Whether zero-width characters are stripped (the `zero_width` channel is `strip`)."""
        return self.zero_width == "strip"
