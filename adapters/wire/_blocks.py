"""Read a sanitized MCP tool result into text lines, images and what passes to the client.

The result is the core's wire-shaped `ToolResult` (`_wire`), whatever SDK or framework made
it. Images are `image` blocks, embedded `blob` contents whose bytes are an image, and the
image payloads inside text (a data URL, a serialized JSON value) and inside structured content
and `_meta` (`_inline`, `_copies`): the same bytes twice are one image. Each one is decoded and
written to the cache here, so the images a result can attach are exactly the files this call
wrote; nothing in the server's text is ever taken for a path. Resource links stay links.

Blocks whose `annotations.audience` leaves out the assistant are for the user (Goose does the
same, research §2.1): with `user_only: pass` (the default) they go to the client as they came,
annotations intact, and the model reads only a note counting them, never their text or their
images' paths; `reference` adds the paths of their images for the model; `withhold` leaves them
out of what the client gets. Audio is not the gate's business: it passes as it came.

A line of the server's own text that starts like a `MEDIA:` line is prefixed with
`[unverified]`, so an agent surface that attaches `MEDIA:` files cannot be steered by a
server to attach a file of its choosing (say `MEDIA:/etc/passwd`).

The server's names, URIs and descriptions inside the notes written here (`[resource link:
...]`) are squeezed onto one line and clipped, and a declared media type is shown only when
it is a well-formed `type/subtype`: the type that counts is the one sniffed from the bytes.
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from visiongate.kernel._display import one_line

from .._cache import UNKNOWN_EXTENSION, CachedFile, ImageCache, extension_for
from .._routed import mark_unverified_media, media_line
from ..images import decode_base64, sniff_media_type
from ..images._sniff import NOT_IMAGES
from ._copies import InlineCopy, read_copy
from ._inline import InlineImage
from ._text import text_images
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
    block_wire,
    merged_annotations,
)

__all__ = ["FoundImage", "ReadResult", "UserOnly", "read_result"]

UserOnly = Literal["pass", "reference", "withhold"]
"""What becomes of content annotated for the user only (`execution.user_only`)."""
# RFC 6838 restricted names; anything else a server declares is not shown as a type.
_MEDIA_TYPE: Final = re.compile(
    r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
)
_FIELD_CHARS: Final = 200


@dataclass(frozen=True)
class FoundImage:
    """One image of a tool result, after decoding and caching."""

    index: int
    """1-based, in reading order; the text's notes say `image <index>`."""
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
    origin: str = "content"
    """Where it was found: `content` (a block), `text` (inside a text), `structured_content`
    or `meta` (found only there)."""
    annotations: Annotations | None = None

    @property
    def path(self) -> str | None:
        return str(self.cached.path) if self.cached is not None else None

    @property
    def sha256(self) -> str:
        if self.cached is not None:
            return self.cached.sha256
        return hashlib.sha256(self.data).hexdigest()


Passed = Mapping[str, Any] | FoundImage
"""A block the client gets as it came (wire shape), or a user-only image, fitted later."""


@dataclass(frozen=True)
class ReadResult:
    lines: tuple[str, ...]
    """The model-facing text, block by block, with a `MEDIA:` line where each image was."""
    images: tuple[FoundImage, ...]
    hidden_texts: int
    """Parts left out of the model's text because their audience leaves out the assistant."""
    unverified_media_lines: int
    """`MEDIA:` lines in the server's text, prefixed so no surface takes them for ours."""
    passed: tuple[Passed, ...] = ()
    """What goes to the client besides the model's text and images, in content order."""
    annotations: Mapping[str, Any] | None = None
    """For the model's one text block: what its parts' annotations say together."""
    structured: InlineCopy | None = None
    meta: InlineCopy | None = None
    user_only: UserOnly = "pass"

    def references(self) -> dict[int, str]:
        """Per image index, the line the model reads for it (in notes and JSON copies)."""
        return {found.index: _reference(found, self.user_only) for found in self.images}


def read_result(result: ToolResult, cache: ImageCache, user_only: UserOnly = "pass") -> ReadResult:
    """Lines, images and passed blocks of a sanitized result; writes images to `cache`
    (blocking I/O)."""
    reader = _Reader(cache, user_only)
    for block in result.content:
        reader.block(block)
    structured = reader.copy(result.structured_content, "structured_content")
    meta = reader.copy(result.meta, "meta")
    return ReadResult(
        tuple(reader.lines),
        tuple(reader.images),
        reader.hidden,
        reader.unverified,
        tuple(reader.passed),
        merged_annotations(reader.model_annotations),
        structured,
        meta,
        user_only,
    )


@dataclass
class _Reader:
    cache: ImageCache
    user_only: UserOnly
    lines: list[str] = field(default_factory=list)
    images: list[FoundImage] = field(default_factory=list)
    passed: list[Passed] = field(default_factory=list)
    model_annotations: list[Annotations | None] = field(default_factory=list)
    hidden: int = 0
    unverified: int = 0

    def block(self, block: Block) -> None:
        annotations = getattr(block, "annotations", None)
        if not _for_model(annotations):
            self._for_user(block)
            return
        self.model_annotations.append(annotations)
        found = _image_of(block, len(self.images) + 1, self.cache, True)
        if found is not None:
            self.images.append(found)
            self.lines.append(_image_line(found))
        elif isinstance(block, TextBlock | EmbeddedBlock) and _is_text(block):
            self._text(block)
        else:
            if isinstance(block, AudioBlock):
                self.passed.append(block_wire(block))
            self.lines += _text_lines(block)

    def _for_user(self, block: Block) -> None:
        self.hidden += 1
        found = _image_of(block, len(self.images) + 1, self.cache, False)
        if found is not None:
            self.images.append(found)
            if self.user_only == "reference" and found.path is not None:
                self.lines.append(media_line(found.path))
        if self.user_only == "withhold":
            return
        if found is not None and found.cached is not None:
            self.passed.append(found)
        elif found is None:
            self.passed.append(block_wire(_marked(block)))

    def _text(self, block: TextBlock | EmbeddedBlock) -> None:
        if isinstance(block, EmbeddedBlock):
            assert isinstance(block.resource, TextContents)
            self.lines.append(f"[resource <{inline(block.resource.uri)}>]")
            text = block.resource.text
        else:
            text = block.text
        marked, count = mark_unverified_media(text)
        self.unverified += count
        found = text_images(marked)
        seen = len(self.images)
        images = {id(payload): self._inline_image(payload, "text") for payload in found.payloads}
        self.lines.append(
            found.rendered(
                lambda payload: _reference(images[id(payload)], self.user_only),
                lambda payload: f"[image {images[id(payload)].index}]",
            )
        )
        if found.payloads and found.payloads[0].kind != "bare":
            # A `MEDIA:` line for each image first seen here (one seen before has its own).
            new = {image.index: image for image in images.values() if image.index > seen}
            self.lines += [_image_line(image) for image in new.values()]

    def copy(self, value: Any, origin: str) -> InlineCopy | None:
        if value is None:
            return None
        copied, count = read_copy(value, lambda payload: self._inline_image(payload, origin).index)
        self.unverified += count
        return copied

    def _inline_image(self, payload: InlineImage, origin: str) -> FoundImage:
        """The image of the result with these bytes; a new one (cached) the first time."""
        digest = _digest(payload.data)
        for found in self.images:
            if found.data and found.sha256 == digest:
                return found
        found = _found(payload.data, payload.declared, len(self.images) + 1, self.cache, True)
        found = replace(found, origin=origin)
        self.images.append(found)
        return found


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _for_model(annotations: Annotations | None) -> bool:
    audience = annotations.audience if annotations is not None else None
    return audience is None or "assistant" in audience


def _is_text(block: TextBlock | EmbeddedBlock) -> bool:
    return isinstance(block, TextBlock) or isinstance(block.resource, TextContents)


def _marked(block: Block) -> Block:
    """A user-only block with its text's `MEDIA:` lines marked (a client may show it to the
    model after all); other blocks as they are."""
    if isinstance(block, TextBlock):
        return replace(block, text=mark_unverified_media(block.text)[0])
    if isinstance(block, EmbeddedBlock) and isinstance(block.resource, TextContents):
        text = mark_unverified_media(block.resource.text)[0]
        return replace(block, resource=replace(block.resource, text=text))
    return block


def _image_of(block: Block, index: int, cache: ImageCache, for_model: bool) -> FoundImage | None:
    annotations = getattr(block, "annotations", None)
    if isinstance(block, ImageBlock):
        found = _decode(block.data, block.mime_type, index, cache, for_model)
        return _annotated(found, annotations)
    if isinstance(block, EmbeddedBlock) and isinstance(block.resource, BlobContents):
        declared = block.resource.mime_type or ""
        found = _decode(block.resource.blob, declared, index, cache, for_model)
        if declared.startswith("image/") or (found.sniffed or "").startswith("image/"):
            return _annotated(found, annotations)
    return None


def _annotated(found: FoundImage, annotations: Annotations | None) -> FoundImage:
    return replace(found, annotations=annotations) if annotations is not None else found


def _decode(
    encoded: str, declared: str, index: int, cache: ImageCache, for_model: bool
) -> FoundImage:
    try:
        data = decode_base64(encoded)
    except (binascii.Error, ValueError):
        # Reported in the text and the record, not raised: one bad block must not sink the rest.
        problem = "refused: its base64 data is invalid"
        return FoundImage(index, declared, b"", None, None, for_model, problem)
    return _found(data, declared, index, cache, for_model)


def _found(
    data: bytes, declared: str, index: int, cache: ImageCache, for_model: bool
) -> FoundImage:
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
    return one_line(text, limit, unprintable="space_controls")


def _image_line(found: FoundImage) -> str:
    if found.path is not None:
        return media_line(found.path)
    return f"[image {found.index}: {found.problem}]"


def _reference(found: FoundImage, user_only: UserOnly) -> str:
    if found.for_model or (user_only == "reference" and found.path is not None):
        return _image_line(found)
    return f"[image {found.index}: for the user only (audience)]"


def _text_lines(block: Block) -> list[str]:
    if isinstance(block, UnknownBlock):
        return [
            f"[content of type `{inline(block.type, 40)}` omitted: this version cannot read it]"
        ]
    if isinstance(block, ResourceLinkBlock):
        kind = f", {_shown_kind(block.mime_type, '')}" if block.mime_type else ""
        about = f": {inline(block.description, 1000)}" if block.description else ""
        return [f"[resource link: {inline(block.name)} <{inline(block.uri)}>{kind}{about}]"]
    if isinstance(block, EmbeddedBlock):
        kind = _shown_kind(block.resource.mime_type, "unknown type")
        uri = inline(block.resource.uri)
        return [f"[resource <{uri}> ({kind}) omitted: not text and not an image]"]
    if isinstance(block, AudioBlock):
        kind = _shown_kind(block.mime_type, "no type")
        return [f"[audio ({kind}): passed on as it came; visiongate routes images only]"]
    return []


def hidden_note(count: int, user_only: UserOnly = "pass") -> str:
    """The line saying some of the result was meant for the user only."""
    if user_only == "withhold":
        return f"[{count} part(s) of this result are for the user only (audience); left out]"
    return (
        f"[{count} part(s) of this result are for the user only (audience): the client has "
        "them to show its user; they are not shown to the model]"
    )
