"""Read a sanitized MCP tool result into text lines and images found, in content order.

The result is the core's wire-shaped `ToolResult` (`_wire`), whatever SDK or framework made
it. Images are `image` blocks and embedded `blob` contents whose bytes are an image.
Each one is decoded and written to the cache here, so the images a result can attach are
exactly the files this call wrote; nothing in the server's text is ever taken for a path.
Resource links stay links, audio stays out, and blocks whose `annotations.audience` leaves
out the assistant are not shown to the model (Goose does the same, research §2.1).

A line of the server's own text that starts like a `MEDIA:` line is prefixed with
`[unverified]`, so an agent surface that attaches `MEDIA:` files cannot be steered by a
server to attach a file of its choosing (say `MEDIA:/etc/passwd`).

The server's names, URIs and descriptions inside the notes written here (`[resource link:
...]`) are squeezed onto one line and clipped, and a declared media type is shown only when
it is a well-formed `type/subtype`: the type that counts is the one sniffed from the bytes.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from typing import Final

from .._cache import UNKNOWN_EXTENSION, CachedFile, ImageCache, extension_for
from .._routed import mark_unverified_media, media_line
from ..images import decode_base64, sniff_media_type
from ..images._sniff import NOT_IMAGES
from ._wire import (
    Annotations,
    AudioBlock,
    BlobContents,
    Block,
    EmbeddedBlock,
    ImageBlock,
    ResourceLinkBlock,
    TextBlock,
    TextContents,
    ToolResult,
    UnknownBlock,
)

__all__ = ["FoundImage", "ReadResult", "read_result"]

_NOT_FOR_MODEL: Final = "for the user only (audience), not shown to the model"
# RFC 6838 restricted names; anything else a server declares is not shown as a type.
_MEDIA_TYPE: Final = re.compile(
    r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
)
_LINE_BREAKS_AND_SPACES: Final = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_FIELD_CHARS: Final = 200


@dataclass(frozen=True)
class FoundImage:
    """One image of a tool result, after decoding and caching."""

    index: int
    """1-based, in content order; the text's notes say `image <index>`."""
    declared: str
    """The media type the server declared (untrusted)."""
    data: bytes
    """The decoded bytes; empty when they could not be decoded."""
    sniffed: str | None
    cached: CachedFile | None
    for_model: bool
    """False when the block's audience leaves out the assistant."""
    problem: str | None = None
    """Why the bytes are unusable before any processing (bad base64, not an image)."""

    @property
    def path(self) -> str | None:
        return str(self.cached.path) if self.cached is not None else None


@dataclass(frozen=True)
class ReadResult:
    lines: tuple[str, ...]
    """The model-facing text, block by block, with a `MEDIA:` line where each image was."""
    images: tuple[FoundImage, ...]
    hidden_texts: int
    """Text blocks left out because their audience leaves out the assistant."""
    unverified_media_lines: int
    """`MEDIA:` lines in the server's text, prefixed so no surface takes them for ours."""


def read_result(result: ToolResult, cache: ImageCache) -> ReadResult:
    """Lines and images of a sanitized result; writes images to `cache` (blocking I/O)."""
    lines: list[str] = []
    images: list[FoundImage] = []
    hidden = unverified = 0
    for block in result.content:
        if isinstance(block, TextBlock) and not _for_model(block.annotations):
            hidden += 1
            continue
        found = _image_of(block, len(images) + 1, cache)
        if found is not None:
            images.append(found)
            lines.append(_image_line(found))
            continue
        for line in _text_lines(block):
            marked, count = mark_unverified_media(line)
            lines.append(marked)
            unverified += count
    return ReadResult(tuple(lines), tuple(images), hidden, unverified)


def _for_model(annotations: Annotations | None) -> bool:
    audience = annotations.audience if annotations is not None else None
    return audience is None or "assistant" in audience


def _image_of(block: Block, index: int, cache: ImageCache) -> FoundImage | None:
    if isinstance(block, ImageBlock):
        return _decode(block.data, block.mime_type, index, cache, _for_model(block.annotations))
    if isinstance(block, EmbeddedBlock) and isinstance(block.resource, BlobContents):
        declared = block.resource.mime_type or ""
        found = _decode(block.resource.blob, declared, index, cache, _for_model(block.annotations))
        if declared.startswith("image/") or (found.sniffed or "").startswith("image/"):
            return found
    return None


def _decode(
    encoded: str, declared: str, index: int, cache: ImageCache, for_model: bool
) -> FoundImage:
    try:
        data = decode_base64(encoded)
    except (binascii.Error, ValueError):
        # Reported in the text and the record, not raised: one bad block must not sink the rest.
        problem = "refused: its base64 data is invalid"
        return FoundImage(index, declared, b"", None, None, for_model, problem)
    sniffed = sniff_media_type(data)
    if sniffed is None or extension_for(sniffed) == UNKNOWN_EXTENSION:
        # Only raster images are written to the cache: an SVG or HTML file named by a
        # `MEDIA:` line could run script in whatever surface opens it.
        problem = f"refused: {NOT_IMAGES.get(sniffed or '', _not_raster(sniffed, declared))}"
        return FoundImage(index, declared, data, sniffed, None, for_model, problem)
    return FoundImage(index, declared, data, sniffed, cache.write(data, sniffed), for_model)


def _not_raster(sniffed: str | None, declared: str) -> str:
    if sniffed is None:
        essence = media_type_essence(declared)
        shown = f"`{essence}`" if essence else "an invalid media type"
        return f"its bytes are not a recognised image (declared {shown})"
    return f"unsupported image format `{sniffed}`"


def media_type_essence(declared: str | None) -> str | None:
    """A server's declared media type as the model may read it: `type/subtype`, lower-case,
    parameters dropped; None when it is not well formed. Never the server's raw string."""
    essence = (declared or "").partition(";")[0].strip().lower()
    return essence if _MEDIA_TYPE.fullmatch(essence) else None


def _shown_kind(declared: str | None, missing: str) -> str:
    if not declared:
        return missing
    return media_type_essence(declared) or "invalid media type"


def inline(text: str, limit: int = _FIELD_CHARS) -> str:
    """A server's string for a one-line note: line breaks and runs of space become one space,
    and it is clipped to `limit` characters (marked with an ellipsis)."""
    squeezed = _LINE_BREAKS_AND_SPACES.sub(" ", text).strip()
    return squeezed if len(squeezed) <= limit else squeezed[: limit - 1] + "…"


def _image_line(found: FoundImage) -> str:
    if found.path is not None:
        return media_line(found.path)
    return f"[image {found.index}: {found.problem}]"


def _text_lines(block: Block) -> list[str]:
    if isinstance(block, TextBlock):
        return [block.text]
    if isinstance(block, UnknownBlock):
        return [
            f"[content of type `{inline(block.type, 40)}` omitted: this version cannot read it]"
        ]
    if not _for_model(block.annotations):
        return []
    if isinstance(block, ResourceLinkBlock):
        kind = f", {_shown_kind(block.mime_type, '')}" if block.mime_type else ""
        about = f": {inline(block.description, 1000)}" if block.description else ""
        return [f"[resource link: {inline(block.name)} <{inline(block.uri)}>{kind}{about}]"]
    if isinstance(block, EmbeddedBlock):
        return _resource_lines(block.resource)
    if isinstance(block, AudioBlock):
        kind = _shown_kind(block.mime_type, "no type")
        return [f"[audio ({kind}) omitted: audio does not reach the model]"]
    return []


def _resource_lines(resource: TextContents | BlobContents) -> list[str]:
    uri = inline(resource.uri)
    if isinstance(resource, TextContents):
        return [f"[resource <{uri}>]", resource.text]
    kind = _shown_kind(resource.mime_type, "unknown type")
    return [f"[resource <{uri}> ({kind}) omitted: not text and not an image]"]


def hidden_note(count: int) -> str:
    """The line saying some of the result was meant for the user only."""
    return f"[{count} part(s) of this result are {_NOT_FOR_MODEL}]"
