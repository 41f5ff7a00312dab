"""Content for the user only: what the client gets of it, within the result's budget.

The gate decides what the model reads; content annotated `audience: ["user"]` is not the
model's, so it goes to the client with its annotations (`execution.user_only: pass` or
`reference`). Its text passes as it came (sanitized, `MEDIA:` lines marked, since a client may
show it to the model after all). Its images pass byte for byte, unless the result has a budget
(a client's message cap) they do not fit: then each is fitted to its share of it, and one that
cannot be becomes a note for the user naming the cached file.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._routed import with_annotations
from ..images import ImageTarget, process_images_async
from ..wire._blocks import FoundImage, ReadResult
from ..wire._wire import annotations_wire
from ._lane import LaneContext

__all__ = ["UserParts", "user_parts"]

_USER_FORMATS: Final = ("image/png", "image/jpeg", "image/webp")


@dataclass
class UserParts:
    """The passed blocks in content order, their images' base64 size, and what the record
    says about them."""

    blocks: list[Mapping[str, Any]] = field(default_factory=list)
    image_chars: int = 0
    images: list[dict[str, Any]] = field(default_factory=list)


async def user_parts(read: ReadResult, context: LaneContext, share: int | None) -> UserParts:
    """The blocks the client gets as they came; user-only images fitted to `share` base64
    characters each when they are larger (None: no budget, they pass as they came)."""
    parts = UserParts()
    for item in read.passed:
        if not isinstance(item, FoundImage):
            parts.blocks.append(item)
            continue
        block, entry = await _image(item, context, share)
        parts.blocks.append(block)
        parts.images.append(entry)
        if block.get("type") == "image":
            parts.image_chars += len(block["data"])
    return parts


async def _image(
    found: FoundImage, context: LaneContext, share: int | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    encoded = base64.b64encode(found.data).decode("ascii")
    entry: dict[str, Any] = {"index": found.index, "bytes_before": len(found.data)}
    notes = annotations_wire(found.annotations)
    if share is None or len(encoded) <= share:
        assert found.sniffed is not None  # passed images were cached, so they were sniffed
        entry["sent"] = "as it came"
        return _block(encoded, found.sniffed, notes), entry
    edge = min(context.max_edge_px or context.native_settings.max_edge_px, 8192)
    target = ImageTarget(formats=_USER_FORMATS, budget_base64=max(share, 1), max_edge_px=edge)
    batch = await process_images_async([found.data], target, context.native_settings)
    if batch.attached:
        image = batch.attached[0]
        entry |= {"sent": "fitted", "size": [image.width, image.height]}
        entry["bytes_after"] = len(image.data)
        return _block(image.base64, image.media_type, notes), entry
    entry["sent"] = "as a note: it cannot be fitted to the client's limit"
    text = (
        f"[image {found.index} for you could not be sent within this client's limit of one "
        f"message; it is saved as {found.path}]"
    )
    return with_annotations({"type": "text", "text": text}, notes), entry


def _block(data: str, media_type: str, notes: Mapping[str, Any] | None) -> dict[str, Any]:
    return with_annotations({"type": "image", "data": data, "mimeType": media_type}, notes)
