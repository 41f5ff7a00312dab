"""Image blobs of a `resources/read` result, routed as a tool result's images are (issue 34).

A resource whose contents carry a `blob` with an image `mimeType` (a screenshot, a chart, a
scan a server exposes as a resource) is routed as a one-image tool result of source `mcp`
and written back as contents of the same `uri`: in the native lane the fitted image as a
`blob`, then its notes and `MEDIA:` path as a `text/plain` content; in the text lane the path
and notes alone, no pixels; a blob that does not decode is refused with the reason, as text.
Every other content is kept. `Router.mcp_resource` and the proxy's `resources/read` both
read through here.

What counts as an image is what the image stage decodes (`images._sniff.DECODABLE`); an SVG
or any other blob passes as it came. Nothing here loads the image stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ._routed import RoutedResult
    from .images import ProcessedImage

__all__ = [
    "RoutedResource",
    "as_tool_result",
    "image_blob",
    "read_contents",
    "resource_contents",
    "shares",
]

_ROUTED_TYPES: Final = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff"}
)
"""Image types the image stage decodes (`images._sniff.DECODABLE`, not imported: it would
load the stage before the proxy's handshake)."""
TEXT_TYPE: Final = "text/plain"


def image_blob(content: Any) -> bool:
    """Whether one `resources/read` content is an image blob the gate routes."""
    if not isinstance(content, Mapping) or not isinstance(content.get("blob"), str):
        return False
    media_type = content.get("mimeType")
    return isinstance(media_type, str) and media_type.lower() in _ROUTED_TYPES


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


def read_contents(result: object) -> list[dict[str, Any]]:
    """The contents of a `resources/read` result: the SDK's `ReadResourceResult` (any object
    with `model_dump`) or a wire dict, as wire dicts (camelCase). `ValueError` when it has no
    list of contents or a content is not an object."""
    dump = getattr(result, "model_dump", None)
    wire = dump(by_alias=True, mode="json", exclude_none=True) if callable(dump) else result
    contents = wire.get("contents") if isinstance(wire, Mapping) else None
    if not isinstance(contents, list):
        raise ValueError("a resources/read result needs a list of `contents`")
    for index, content in enumerate(contents):
        if not isinstance(content, Mapping):
            raise ValueError(f"`contents[{index}]` of a resources/read result is not an object")
    return [dict(content) for content in contents]


@dataclass(frozen=True)
class RoutedResource:
    """A `resources/read` result after the gate: what the client gets and what the model sees.

    `contents` are the result's contents, cleaned, each image blob replaced by its routed
    contents (`resource_contents`); `routed` holds one `RoutedResult` per image blob, in
    order: its images, its text and its decision record."""

    contents: tuple[Mapping[str, Any], ...]
    routed: tuple[RoutedResult, ...]

    @property
    def images(self) -> tuple[ProcessedImage, ...]:
        """Every image attached, in order (none in the text lane)."""
        return tuple(image for routed in self.routed for image in routed.images)

    @property
    def text(self) -> str:
        """What a model reads: each text content, and each blob's notes and `MEDIA:` path."""
        return "\n".join(
            str(content["text"])
            for content in self.contents
            if isinstance(content.get("text"), str)
        )

    def to_mcp(self) -> dict[str, Any]:
        """The result as an MCP client takes it: `{"contents": [...]}` (wire dicts)."""
        return {"contents": [dict(content) for content in self.contents]}


def shares(contents: Sequence[Mapping[str, Any]], image_budget: int | None) -> int | None:
    """Each image blob's equal share of `image_budget` (None: no budget)."""
    if image_budget is None:
        return None
    return max(1, image_budget // max(1, sum(image_blob(content) for content in contents)))
