"""Carrying out the gate's lane: what the four source adapters share.

`LaneContext` holds one decision and what executing it needs (settings, cache, the auxiliary
vision backend). The adapters ask it for the native settings and the image target, attach
images through the image stage, describe through the vision backend, and build the record.
Nothing here decides a lane: `decision.lane` is read, never recomputed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from visiongate.engine import Decision, ExecutionSettings, NativeSettings, SanitizeSettings
from visiongate.engine.facts._registry import ProviderRoute
from visiongate.engine.facts._resolver import ResolvedFacts

from .._cache import ImageCache
from ..images import BatchResult, ImageTarget, ProcessedImage, process_images_async
from ..sanitize._sanitizer import Sanitizer
from ..vision import (
    Description,
    DescriptionNote,
    ScreenMemory,
    VisionBackend,
    VisionUnavailable,
    describe_or_unavailable_async,
)

__all__ = ["LaneContext", "attached_summary", "image_label"]

VisionFactory = Callable[[], VisionBackend]
"""Builds (or returns) the auxiliary vision backend; may raise `VisionUnavailable`."""
_SCREEN_STREAMS = frozenset({"computer_use", "browser"})
"""Sources whose images are consecutive screenshots, read against the previous one."""


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
    screens: ScreenMemory | None = None
    """The router's recent screenshots per source, for incremental description."""

    @property
    def resolved(self) -> ResolvedFacts:
        extra = self.decision.extra
        if not isinstance(extra, ResolvedFacts):
            # `decide_facts` has no provider route, so there is no payload shape to fit.
            raise ValueError("routing needs a decision made by `Gate.decide(provider, model)`")
        return extra

    @property
    def route(self) -> ProviderRoute:
        return self.resolved.route

    @property
    def lane(self) -> str:
        return self.decision.lane

    @property
    def native_settings(self) -> NativeSettings:
        return self.execution.native_for(self.source, self.resolved.embed_target_bytes)

    @property
    def text_action(self) -> str:
        return self.execution.text_action(self.source)

    def sanitizer(self) -> Sanitizer:
        """A fresh sanitizer: its tally is this result's, for the record."""
        return Sanitizer(self.sanitize)

    def target(self) -> ImageTarget:
        route = self.route
        return ImageTarget.create(
            route.formats, self.native_settings, route.max_image_base64, route.max_edge_px
        )

    async def attach(self, images: Sequence[bytes]) -> BatchResult:
        """Fit `images` to the route through the image stage, off the event loop."""
        return await process_images_async(
            list(images), self.target(), self.native_settings, seen_hashes=self.seen_hashes
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
        )

    def record(self, execution: Mapping[str, Any], sanitizer: Mapping[str, Any]) -> dict[str, Any]:
        """The decision record with what this adapter did."""
        return self.decision.record(
            source=self.source, execution=dict(execution), sanitizer=dict(sanitizer)
        )


class _Unavailable:
    """Stands in for a backend the config could not build, so the note reads the same."""

    name = "unconfigured"

    def __init__(self, reason: str) -> None:
        self._reason = reason

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        raise VisionUnavailable(self._reason)


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
        "scale_note": image.scale_note,
    }
