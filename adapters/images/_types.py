"""Values that go into and come out of the image-processing stage."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, Literal

from visiongate.engine import NativeSettings
from visiongate.kernel._errors import VisiongateError

OUTPUT_MEDIA_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""Media types this stage can write; a provider's list is filtered down to these."""


class Refusal(VisiongateError):
    """Internal signal that an image must not be attached; carries the one-line reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


MEMORY_REFUSAL: Final = "refused: not enough memory to process this image"
"""The one refusal that says nothing about the image itself (so it is never cached)."""


Room = Literal["slot", "turn"]


@dataclass(frozen=True)
class ImageTarget:
    """What the provider accepts for one image: formats, base64 budget and long-edge ceiling."""

    formats: tuple[str, ...]
    """Accepted media types (provider order is kept; the stage picks by measured detail)."""
    budget_base64: int
    """Largest base64 text per image, in characters (that is what every later request re-sends)."""
    max_edge_px: int
    """Largest long edge, in pixels."""
    turn_budget_base64: int | None = None
    """The most a result's last image may take when the policy gives it the room of the free
    slots (`lone_image: turn`): `max_images` budgets, within the provider's own cap; None: it
    gets one slot's, `budget_base64`."""
    room: Room = "slot"
    """Which room `budget_base64` is: one slot's, or (`turn`) the free slots' of a result's
    last image; the fitted image carries it, for the record."""

    def __post_init__(self) -> None:
        unknown = [
            media_type for media_type in self.formats if media_type not in OUTPUT_MEDIA_TYPES
        ]
        if not self.formats or unknown:
            raise ValueError(f"image formats must be among `{'`, `'.join(OUTPUT_MEDIA_TYPES)}`")
        if len(set(self.formats)) != len(self.formats):
            raise ValueError("image formats must not repeat")
        if self.budget_base64 < 4 or self.max_edge_px < 1:
            raise ValueError("image budget and pixel ceiling must be positive")

    @classmethod
    def create(
        cls,
        formats: Sequence[str],
        native: NativeSettings,
        provider_max_base64: int | None,
        provider_max_edge: int | None,
    ) -> ImageTarget:
        """A target from the policy's native settings and the provider's limits (the smaller wins).

        Provider media types this stage cannot write (HEIC, PDF, ...) are left out.
        """
        budget = native.embed_target_bytes
        if provider_max_base64 is not None:
            budget = min(budget, provider_max_base64)
        edge = native.max_edge_px
        if provider_max_edge is not None:
            edge = min(edge, provider_max_edge)
        writable = tuple(dict.fromkeys(f for f in formats if f in OUTPUT_MEDIA_TYPES))
        turn = None
        if native.lone_image == "turn":
            turn = native.max_images * native.embed_target_bytes
            if provider_max_base64 is not None:
                turn = min(turn, provider_max_base64)
        return cls(writable, budget, edge, turn)

    @property
    def budget_bytes(self) -> int:
        """Largest raw byte count whose base64 text fits the budget."""
        return self.budget_base64 // 4 * 3


@dataclass(frozen=True)
class Region:
    """A rectangle of the original image as displayed (after its EXIF orientation), in pixels."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def span(self, axis: str) -> str:
        """`rows 1490-3058` or `columns 0-1568`: the part of the long axis it covers."""
        if axis == "rows":
            return f"rows {self.top}-{self.bottom}"
        return f"columns {self.left}-{self.right}"


@dataclass(frozen=True)
class ProcessedImage:
    """An image ready to attach, with what a model needs to map coordinates back."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int
    original_width: int
    """Width of the source as displayed (after its EXIF orientation)."""
    original_height: int
    scale_x: float
    """Multiply an x coordinate in this image by this to get the x in the original."""
    scale_y: float
    scale_note: str
    """One line for the model, e.g. `downscaled from 3000x2000 to 1500x1000; ...`."""
    passthrough: bool
    """True when `data` are the input's own encoded pixels: the input bytes, or the input with
    metadata segments removed whole (`metadata_removed`), never decoded and encoded again."""
    encodes: int
    """Full-size encodes spent (0 for a passthrough)."""
    sha256: str
    """Hex digest of the input bytes: the content identity used for de-duplication."""
    source_media_type: str
    """What the input really was, by its magic bytes."""
    quality: int | None = None
    """Encoder quality of a lossy output; None for passthrough and lossless outputs."""
    probe_encodes: int = 0
    """Encodes of a small sample used to predict sizes (not counted in `encodes`)."""
    metadata_removed: tuple[str, ...] = ()
    """What a passthrough left out of the input, e.g. `jpeg comment`, `exif`, `png tEXt chunk`."""
    region: Region | None = None
    """The part of the original this image shows when it is one tile of several; None: all."""
    kept_scale: float = 1.0
    """The share of the ceiling-fitted size (long edge) the budget let it keep at a quality
    where text still reads: 1.0 when nothing but quality was given up (issue 34)."""
    room: Room = "slot"
    """The budget it was fitted in: one slot's, or the turn's free slots' (`lone_image: turn`)."""
    budget_base64: int | None = None
    """That budget in base64 characters (None: not fitted by the stage)."""

    @cached_property
    def base64(self) -> str:
        """The data as base64 text, as providers take it."""
        return base64.b64encode(self.data).decode("ascii")


@dataclass(frozen=True)
class RefusedImage:
    """An image that must not be attached; its `MEDIA:` path stays in the text."""

    reason: str
    """One lower-case line, e.g. `refused: svg is not a raster image`."""
    sha256: str
    sniffed: str | None
    """Media type found in the magic bytes, or None when the data are unknown."""


@dataclass(frozen=True)
class SkippedImage:
    """An image left out because the same bytes are already in the conversation."""

    sha256: str
    note: str


@dataclass(frozen=True)
class Uncovered:
    """The part of a tall or wide capture that no attached tile shows: it goes the text lane's
    way (its description, or its `MEDIA:` path and a note naming it)."""

    region: Region
    original_width: int
    original_height: int
    axis: str
    """`rows` (a tall capture) or `columns` (a wide one)."""
    reason: str
    """Why it is not attached, one lower-case line, e.g. `at most 4 images are attached ...`."""
    pieces: tuple[Region, ...]
    """The same part cut into legible pieces, for a backend that describes images (at most
    as many as a result attaches; a part longer than that is described only in part)."""

    @property
    def whole(self) -> bool:
        """Whether no part of the image was attached."""
        return (self.region.width, self.region.height) == (
            self.original_width,
            self.original_height,
        )

    @property
    def note(self) -> str:
        """`rows 6694-12000 of the 1280x12000 original are not attached: <reason>`."""
        size = f"{self.original_width}x{self.original_height}"
        if self.whole:
            return f"the {size} original is not attached: {self.reason}"
        return (
            f"{self.region.span(self.axis)} of the {size} original are not attached: {self.reason}"
        )


@dataclass(frozen=True)
class TiledImage:
    """A tall or wide capture as overlapping tiles along its long axis, and what they leave."""

    tiles: tuple[ProcessedImage, ...]
    uncovered: Uncovered | None
    sha256: str


@dataclass(frozen=True)
class BatchResult:
    """What happened to each image of one tool result, by index into the input sequence."""

    attached: tuple[ProcessedImage, ...]
    refused: tuple[tuple[int, RefusedImage], ...]
    skipped: tuple[tuple[int, SkippedImage], ...]
    not_tried: tuple[int, ...]
    attached_indexes: tuple[int, ...] = ()
    """Input index of each attached image, in the same order as `attached` (the tiles of one
    tall capture share their index)."""
    uncovered: tuple[tuple[int, Uncovered], ...] = ()
    """Images whose tiles leave part of them (or all of them) to the text lane, by input index."""
