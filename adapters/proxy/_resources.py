"""Image blobs of a `resources/read` answer, through the gate as a tool result's images are.

A resource whose contents carry a `blob` with an image `mimeType` (a screenshot, a chart, a
scan a server exposes as a resource) used to pass as the server sent it: never routed, so a
text-only model was handed pixels and a 2560x1440 PNG went over the desktop client's limit.
Each such content is now routed as a one-image tool result (`route_blobs`)
and written back as contents of the same `uri`: in the native lane the fitted image as a
`blob`, then its notes and `MEDIA:` path as a `text/plain` content; in the text lane the path
and description alone, no pixels; a blob that does not decode is refused with the reason, as
text, and every other content of the answer is kept.

What counts as an image here is what the image stage decodes (`images._sniff.DECODABLE`); an
SVG or any other blob passes as before. Nothing here loads the image stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ._call import Call, ProxyTarget
from ._fit import image_budget

if TYPE_CHECKING:  # the router loads after the handshake (see `_serve`)
    from .._router import Router
    from ._view import ImageViews

__all__ = ["as_tool_result", "has_image_blobs", "image_blob", "resource_contents", "route_blobs"]

Records = list[tuple[dict[str, Any], Call, dict[str, Any]]]
"""Per routed blob: its decision record, the call it stands for and the record's extras."""

_ROUTED_TYPES: Final = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff"}
)
"""Image types the image stage decodes (`images._sniff.DECODABLE`, not imported: it would
load the stage before the handshake)."""
TEXT_TYPE: Final = "text/plain"


def image_blob(content: Any) -> bool:
    """Whether one `resources/read` content is an image blob the gate routes."""
    if not isinstance(content, Mapping) or not isinstance(content.get("blob"), str):
        return False
    media_type = content.get("mimeType")
    return isinstance(media_type, str) and media_type.lower() in _ROUTED_TYPES


def has_image_blobs(body: Mapping[str, Any]) -> bool:
    """Whether a `resources/read` answer holds an image blob to route."""
    result = body.get("result")
    contents = result.get("contents") if isinstance(result, Mapping) else None
    return isinstance(contents, list) and any(image_blob(content) for content in contents)


def as_tool_result(content: Mapping[str, Any]) -> dict[str, Any]:
    """An image blob content as the tool result the router reads: one image block."""
    return {
        "content": [
            {"type": "image", "data": content["blob"], "mimeType": content["mimeType"].lower()}
        ]
    }


def resource_contents(content: Mapping[str, Any], routed: Mapping[str, Any]) -> list[Any]:
    """The contents that stand for one image blob, from its routed result (`to_mcp()`): the
    attached images as blobs of the same `uri`, then one `text/plain` content with the text."""
    uri = content.get("uri")
    images: list[Any] = []
    texts: list[str] = []
    for block in routed.get("content") or []:
        if block.get("type") == "image":
            images.append({"uri": uri, "mimeType": block["mimeType"], "blob": block["data"]})
        elif block.get("type") == "text" and block.get("text"):
            texts.append(block["text"])
    if texts:
        images.append({"uri": uri, "mimeType": TEXT_TYPE, "text": "\n".join(texts)})
    return images


async def route_blobs(
    router: Router,
    target: ProxyTarget,
    views: ImageViews | None,
    request_id: Any,
    contents: list[Any],
    size: int,
) -> tuple[list[Any], Records]:
    """The contents of a cleaned `resources/read` answer with each image blob routed as a
    one-image tool result within its share of the answer's image budget, and one record per
    blob (written by the caller once the answer's size is known)."""
    blobs = [content for content in contents if image_blob(content)]
    share = image_budget({"content": blobs}, size, target.max_result_bytes) // max(len(blobs), 1)
    routed_contents: list[Any] = []
    records: Records = []
    for content in contents:
        if not image_blob(content):
            routed_contents.append(content)
            continue
        call = Call(request_id, None)
        call.answered = call.started
        routed = await router.mcp(
            as_tool_result(content),
            provider=target.provider,
            model=target.model,
            image_budget=share,
            max_edge_px=target.max_edge_px,
            trace=False,
        )
        routed_contents.extend(resource_contents(content, routed.to_mcp()))
        if views is not None:
            views.remember(routed.media_paths)
        extra = {"resource_uri": str(content.get("uri")), "image_budget": share}
        records.append((dict(routed.record), call, extra))
    return routed_contents, records
