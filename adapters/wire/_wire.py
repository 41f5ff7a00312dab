"""The MCP tool result as the routing core reads it: the wire shape, whatever SDK made it.

Frozen values with the spec's fields (snake_case here, camelCase on the wire). `_edge` reads
any result into them, validating once; `ToolResult.to_wire()` gives the wire JSON back.
Nothing here imports an SDK, so the core runs next to whichever one the agent has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from visiongate.kernel._errors import VisiongateError

__all__ = [
    "Annotations",
    "AudioBlock",
    "BlobContents",
    "Block",
    "EmbeddedBlock",
    "ImageBlock",
    "InvalidToolResult",
    "ResourceLinkBlock",
    "TextBlock",
    "TextContents",
    "ToolResult",
    "UnknownBlock",
    "annotations_wire",
    "block_wire",
    "merged_annotations",
]

Meta: TypeAlias = Mapping[str, Any] | None


class InvalidToolResult(VisiongateError, ValueError):
    """A tool result that is not shaped like an MCP `CallToolResult`; one line, names the field."""


@dataclass(frozen=True)
class Annotations:
    audience: tuple[str, ...] | None = None
    priority: float | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class TextBlock:
    text: str
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(frozen=True)
class ImageBlock:
    data: str
    """Base64, as on the wire."""
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(frozen=True)
class AudioBlock:
    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(frozen=True)
class ResourceLinkBlock:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[Mapping[str, Any], ...] | None = None
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(frozen=True)
class TextContents:
    uri: str
    text: str
    mime_type: str | None = None
    meta: Meta = None


@dataclass(frozen=True)
class BlobContents:
    uri: str
    blob: str
    """Base64, as on the wire."""
    mime_type: str | None = None
    meta: Meta = None


@dataclass(frozen=True)
class EmbeddedBlock:
    resource: TextContents | BlobContents
    annotations: Annotations | None = None
    meta: Meta = None


@dataclass(frozen=True)
class UnknownBlock:
    """A content type this version does not know (a later spec's); shown as a one-line note."""

    type: str


Block: TypeAlias = (
    TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | EmbeddedBlock | UnknownBlock
)


@dataclass(frozen=True)
class ToolResult:
    """A `tools/call` result in the wire shape: content blocks, structured content, error flag."""

    content: tuple[Block, ...]
    structured_content: Any = None
    is_error: bool = False
    meta: Meta = None
    dropped: tuple[str, ...] = ()
    """Notes on malformed fields the edge dropped to keep the rest (a `_meta` that is not an
    object), for the model's text; never on the wire."""

    def to_wire(self) -> dict[str, Any]:
        """The result as JSON on the wire (camelCase, `_meta`, absent fields left out)."""
        wire: dict[str, Any] = {"content": [block_wire(block) for block in self.content]}
        if self.structured_content is not None:
            wire["structuredContent"] = self.structured_content
        if self.is_error:
            wire["isError"] = True
        return _with_meta(wire, self.meta)


# -- back to the wire ----------------------------------------------------------------------------


def _with_meta(wire: dict[str, Any], meta: Meta) -> dict[str, Any]:
    if meta:
        wire["_meta"] = dict(meta)
    return wire


def annotations_wire(annotations: Annotations | None) -> dict[str, Any] | None:
    if annotations is None:
        return None
    wire = {
        "audience": list(annotations.audience) if annotations.audience is not None else None,
        "priority": annotations.priority,
        "lastModified": annotations.last_modified,
    }
    return {key: value for key, value in wire.items() if value is not None}


def block_wire(block: Block) -> dict[str, Any]:
    """One content block as JSON on the wire, annotations and `_meta` included."""
    if isinstance(block, UnknownBlock):
        return {"type": block.type}
    if isinstance(block, EmbeddedBlock):
        resource = block.resource
        inner = {"uri": resource.uri, "mimeType": resource.mime_type}
        inner |= (
            {"text": resource.text}
            if isinstance(resource, TextContents)
            else {"blob": resource.blob}
        )
        fields: dict[str, Any] = {"type": "resource", "resource": _with_meta(inner, resource.meta)}
    elif isinstance(block, TextBlock):
        fields = {"type": "text", "text": block.text}
    elif isinstance(block, ImageBlock | AudioBlock):
        kind = "image" if isinstance(block, ImageBlock) else "audio"
        fields = {"type": kind, "data": block.data, "mimeType": block.mime_type}
    else:
        fields = {
            "type": "resource_link",
            **{key: getattr(block, key) for key in ("uri", "name", "title", "description")},
            "mimeType": block.mime_type,
            "size": block.size,
            "icons": list(block.icons) if block.icons is not None else None,
        }
    fields["annotations"] = annotations_wire(block.annotations)
    wire = {key: value for key, value in fields.items() if value is not None}
    if isinstance(wire.get("resource"), dict):
        wire["resource"] = {k: v for k, v in wire["resource"].items() if v is not None}
    return _with_meta(wire, block.meta)


def merged_annotations(parts: Sequence[Annotations | None]) -> dict[str, Any] | None:
    """What the annotations of several blocks say about the one block made of them (wire
    shape), or None when none had any: the audiences joined (a part without one is for both;
    none when no part named one), the highest priority, the latest modification time."""
    if all(part is None for part in parts):
        return None
    audiences: set[str] = set()
    for part in parts:
        audience = part.audience if part is not None else None
        audiences.update(audience if audience is not None else ("user", "assistant"))
    if all(part is None or part.audience is None for part in parts):
        audiences = set()
    priorities = [p.priority for p in parts if p is not None and p.priority is not None]
    times = [p.last_modified for p in parts if p is not None and p.last_modified is not None]
    merged = Annotations(
        audience=tuple(role for role in ("user", "assistant") if role in audiences) or None,
        priority=max(priorities) if priorities else None,
        last_modified=max(times) if times else None,
    )
    return annotations_wire(merged)
