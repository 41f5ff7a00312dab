"""Carrying out the gate's lane: what the four source adapters share.

`LaneContext` holds one decision and what executing it needs (settings, cache, the auxiliary
vision backend). The adapters ask it for the native settings and the image target, attach
images through the image stage, describe through the vision backend, and build the record.
Nothing here decides a lane: `decision.lane` is read, never recomputed.

Attaching ends with the payload's last-resort guard (`payloads._guard`) for the API shape the
result will be rendered in, so the record the adapters build says what the payload will
carry: an image the guard withholds is refused here, never recorded as attached. A route the
guard refuses outright costs no image work at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, ParamSpec, TypeVar

from visiongate.engine import Decision, ExecutionSettings, NativeSettings, SanitizeSettings
from visiongate.engine.facts import ProviderRegistry, ProviderRoute, ResolvedFacts

from .._cache import ImageCache
from .._part_request import PART_TOOL
from .._routed import ask_tool
from ..images import (
    BatchResult,
    ImageTarget,
    ProcessedImage,
    RefusedImage,
    Uncovered,
    default_worker,
    process_images_async,
    sniff_media_type,
)
from ..images._process import region_png
from ..images._types import Refusal
from ..payloads._guard import GUARD_PREFIX, Limits, guard_images, limits_for, refusal
from ..sanitize._media import mark_unverified_media
from ..sanitize._sanitizer import Sanitizer
from ..vision import (
    Description,
    DescriptionNote,
    ScreenMemory,
    VisionBackend,
    VisionUnavailable,
    describe_or_unavailable_async,
)
from ..wire._wire import BlobContents, EmbeddedBlock, ImageBlock, ToolResult

__all__ = ["LaneContext", "attached_summary", "description_block", "holds_images", "image_label"]

_P = ParamSpec("_P")
_R = TypeVar("_R")
VisionFactory = Callable[[], VisionBackend]
"""Builds (or returns) the auxiliary vision backend; may raise `VisionUnavailable`."""
_SCREEN_STREAMS = frozenset({"computer_use", "browser"})
"""Sources whose images are consecutive screenshots, read against the previous one."""


@dataclass(frozen=True)
class DecidedLane:
    """The decision as a lane reads it, taken from the `Decision` once: its lane, and what the
    fact resolver knew (with the provider route), or None for a decision on facts given
    directly (`decide_facts`)."""

    lane: str
    resolved: ResolvedFacts | None

    @classmethod
    def of(cls, decision: Decision) -> DecidedLane:
        return cls(decision.lane, decision.extra)


@dataclass(frozen=True)
class LaneContext:
    """One decision and what carrying it out needs, for one tool result."""

    decision: Decision
    source: str
    execution: ExecutionSettings
    sanitize: SanitizeSettings
    cache: ImageCache
    vision: VisionFactory
    seen_hashes: frozenset[str] = frozenset()
    """SHA-256 of images already in the conversation: not attached again (skipped, noted)."""
    api: str | None = None
    """The payload shape the result will be rendered in; None: the route's own."""
    registry: ProviderRegistry | None = None
    """For the limits of an API shape other than the route's."""
    delivery: Literal["message", "string"] = "message"
    """`string`: the caller takes text only, so no pixels can be delivered at all."""
    screens: ScreenMemory | None = None
    """The router's recent screenshots per source, for incremental description."""
    result_budget: int | None = None
    """Base64 characters the attached images of this result may take together (a client's
    message cap); each image also keeps within its own budget. None: per image only."""
    max_edge_px: int | None = None
    """A further ceiling on each image's long edge (a provider's many-image limit)."""
    image_tool: str | None = "vision_analyze"
    """The tool the model can call with a `MEDIA:` path to see an image kept out (the agent's
    `vision_analyze`, the proxy's own tool); None: there is none, and no note offers one."""

    def ask_tool(self, what: str = "it") -> str:
        """The end of a note on an image kept out: how the model can see `what`, if it can."""
        return ask_tool(self.image_tool, what)

    @cached_property
    def decided(self) -> DecidedLane:
        """The decision's inputs to this lane, read once (every step below reads them here)."""
        return DecidedLane.of(self.decision)

    @property
    def resolved(self) -> ResolvedFacts:
        extra = self.decided.resolved
        if extra is None:
            # `decide_facts` has no provider route, so there is no payload shape to fit.
            raise ValueError("routing needs a decision made by `Gate.decide(provider, model)`")
        return extra

    @property
    def route(self) -> ProviderRoute:
        return self.resolved.route

    @property
    def lane(self) -> str:
        return self.decided.lane

    @property
    def native_settings(self) -> NativeSettings:
        return self.execution.native_for(self.source, self.resolved.embed_target_bytes)

    @property
    def text_action(self) -> str:
        return self.execution.text_action(self.source)

    def sanitizer(self) -> Sanitizer:
        """A fresh sanitizer: its tally is this result's, for the record."""
        return Sanitizer(self.sanitize)

    @property
    def payload_api(self) -> str:
        return self.api or self.route.api

    @property
    def limits(self) -> Limits:
        """What the payload shape takes: formats, bytes, edge and count."""
        return limits_for(self.route, self.payload_api, self.registry)

    def target(self) -> ImageTarget:
        limits = self.limits
        edge = limits.max_edge_px
        if self.max_edge_px is not None:
            edge = min(edge, self.max_edge_px)
        return ImageTarget.create(
            limits.formats, self.native_settings, limits.max_image_base64, edge
        )

    async def attach(self, images: Sequence[bytes]) -> BatchResult:
        """Fit `images` to the payload shape through the image stage, off the event loop, then
        apply the payload guard; a route the guard refuses outright is not processed."""
        whole = refusal(self.lane, self.route, is_error=False)
        if whole is not None:
            return _all_refused(images, GUARD_PREFIX + whole)
        batch = await process_images_async(
            list(images),
            self.target(),
            self.native_settings,
            seen_hashes=self.seen_hashes,
            result_budget=self.result_budget,
        )
        return self._guarded(batch)

    async def off_loop(
        self, touches_images: bool, function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs
    ) -> _R:
        """`function(*args)` on the image stage's worker threads when it touches image data
        (decoding base64, hashing, writing the cache), else right here: a result without
        images costs less than the hop to a thread."""
        if not touches_images:
            return function(*args, **kwargs)
        return await default_worker().run(function, *args, **kwargs)

    async def uncovered(
        self, name: str, image: bytes, media_path: str | None, part: Uncovered
    ) -> tuple[list[str], list[tuple[str, DescriptionNote]]]:
        """What goes the text lane's way for the part of a tall capture no tile shows: with
        `describe`, a description of each legible piece of it (with the part it shows, e.g.
        `rows 6707-8449`); always a note naming the part and where the whole image is."""
        where = "its MEDIA: path" if media_path else "the tool's file"
        note = f"{name}: {part.note}; the whole image is at {where}"
        if self.text_action != "describe":
            return [f"[{note}{self._rows_hint(part, media_path)}]"], []
        described: list[tuple[str, DescriptionNote]] = []
        end = part.region.top if part.axis == "rows" else part.region.left
        for piece in part.pieces:
            try:
                crop = await self.off_loop(True, region_png, image, piece)
            except (Refusal, MemoryError):
                break  # the same bytes fitted a moment ago; say where the description stops
            piece_note = await self.describe(crop, "image/png", media_path)
            described.append((piece.span(part.axis), piece_note))
            end = piece.bottom if part.axis == "rows" else piece.right
        whole_end = part.original_height if part.axis == "rows" else part.original_width
        rest = f"; {part.axis} past {end} are not described" if end < whole_end else ""
        if described:
            note += f"; described above from its pixels{rest}"
        return [f"[{note}{self._rows_hint(part, media_path)}]"], described

    def _rows_hint(self, part: Uncovered, media_path: str | None) -> str:
        """How to see the rows no tile shows, where the tool offered takes rows."""
        if self.image_tool != PART_TOOL or media_path is None or part.axis != "rows":
            return ""
        return (
            f"; to see those rows, call {PART_TOOL} with its MEDIA: path and "
            f"`rows_from` {part.region.top}"
        )

    def _guarded(self, batch: BatchResult) -> BatchResult:
        """`batch` with the images the payload guard withholds moved to `refused`."""
        sent, withheld = guard_images(
            batch.attached, lane=self.lane, route=self.route, is_error=False, limits=self.limits
        )
        if not withheld:
            return batch
        positions = batch.attached_indexes or tuple(range(len(batch.attached)))
        dropped = {item.index - 1: item.reason for item in withheld}
        refused = list(batch.refused) + [
            (positions[i], RefusedImage(GUARD_PREFIX + reason, image.sha256, image.media_type))
            for i, image in enumerate(batch.attached)
            if (reason := dropped.get(i)) is not None
        ]
        kept = [i for i in range(len(batch.attached)) if i not in dropped]
        return BatchResult(
            attached=sent,
            refused=tuple(sorted(refused, key=lambda item: item[0])),
            skipped=batch.skipped,
            not_tried=batch.not_tried,
            attached_indexes=tuple(positions[i] for i in kept),
        )

    async def describe(
        self, image: bytes, media_type: str, media_path: str | None, question: str | None = None
    ) -> DescriptionNote:
        """The auxiliary backend's note for one image; never raises (unavailable is a note)."""
        try:
            backend = self.vision()
        except VisionUnavailable as error:
            backend = _Unavailable(error.reason)
        stream = self.source if self.source in _SCREEN_STREAMS else None
        return await describe_or_unavailable_async(
            backend,
            image,
            media_type,
            media_path=media_path,
            question=question,
            memory=self.screens,
            stream=stream,
            image_tool=self.image_tool,
        )

    def record(self, execution: Mapping[str, Any], sanitizer: Mapping[str, Any]) -> dict[str, Any]:
        """The decision record with what this adapter did, and for which payload shape."""
        done = {**execution, "api": self.payload_api, "delivery": self.delivery}
        if execution.get("attached"):
            # The formats the route takes: WebP is written only where every API it reaches
            # accepts it (the registry's formats per provider and shape).
            done["formats"] = list(self.target().formats)
        return self.decision.record(source=self.source, execution=done, sanitizer=dict(sanitizer))


def _all_refused(images: Sequence[bytes], reason: str) -> BatchResult:
    """Every image refused for one reason, without decoding any of them."""
    refused = tuple(
        (index, RefusedImage(reason, _digest(data), sniff_media_type(data)))
        for index, data in enumerate(images)
    )
    return BatchResult(attached=(), refused=refused, skipped=(), not_tried=())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Unavailable:
    """Stands in for a backend the config could not build, so the note reads the same."""

    name = "unconfigured"

    def __init__(self, reason: str) -> None:
        self._reason = reason

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        raise VisionUnavailable(self._reason)


def holds_images(result: ToolResult) -> bool:
    """Whether a result holds a base64 payload (an image block or an embedded blob)."""
    return any(
        isinstance(block, ImageBlock)
        or (isinstance(block, EmbeddedBlock) and isinstance(block.resource, BlobContents))
        for block in result.content
    )


def description_block(
    name: str, path: str | None, text: str, sanitizer: Sanitizer
) -> tuple[list[str], int]:
    """A backend's description, sanitized, its `MEDIA:` lines marked (a described screenshot
    may show `MEDIA:/some/file` as text), and framed so the model cannot take it for the
    tool's own words; it goes before the tool's text ("antepone la descripción", the seed
    says). Also how many `MEDIA:` lines had to be marked."""
    described, marked = mark_unverified_media(sanitizer.text(text, "description"))
    where = f" ({path})" if path else ""
    lines = [
        f"[description of {name}{where}, not the tool's own output:]",
        described,
        f"[end of the description of {name}]",
    ]
    return lines, marked


def image_label(image: ProcessedImage) -> str:
    """`1568x882 JPEG`."""
    return f"{image.width}x{image.height} {image.media_type.partition('/')[2].upper()}"


def attached_summary(index: int, image: ProcessedImage, bytes_before: int) -> dict[str, Any]:
    """One attached image in the decision record."""
    return {
        "index": index,
        "sha256": image.sha256,
        "media_type": image.media_type,
        "source_media_type": image.source_media_type,
        "size": [image.width, image.height],
        "original_size": [image.original_width, image.original_height],
        "bytes_before": bytes_before,
        "bytes_after": len(image.data),
        "base64_bytes": len(image.base64),
        "passthrough": image.passthrough,
        "encodes": image.encodes,
        "quality": image.quality,
        "kept_scale": image.kept_scale,
        "room": image.room,
        "budget_base64": image.budget_base64,
        "scale_note": image.scale_note,
    }
