"""Image blobs of a `resources/read` answer, through the gate as a tool result's images are.

A resource whose contents carry a `blob` with an image `mimeType` used to pass as the server
sent it: never routed, so a text-only model was handed pixels and a 2560x1440 PNG went over
the desktop client's limit. Each such content is now routed as a one-image tool result
(`route_blobs`, the proxy's side of `.._resource_read`, which `Router.mcp_resource` uses too)
within its share of the answer's image budget, and every other content of the answer is kept.
Nothing here loads the image stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._resource_read import as_tool_result, image_blob, resource_contents
from ._call import Call, ProxyTarget
from ._fit import image_budget

if TYPE_CHECKING:  # the router loads after the handshake (see `_serve`)
    from .._router import Router
    from ._view import ImageViews

__all__ = ["as_tool_result", "has_image_blobs", "image_blob", "resource_contents", "route_blobs"]

Records = list[tuple[dict[str, Any], Call, dict[str, Any]]]
"""Per routed blob: its decision record, the call it stands for and the record's extras."""


def has_image_blobs(body: Mapping[str, Any]) -> bool:
    """Whether a `resources/read` answer holds an image blob to route."""
    result = body.get("result")
    contents = result.get("contents") if isinstance(result, Mapping) else None
    return isinstance(contents, list) and any(image_blob(content) for content in contents)


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
