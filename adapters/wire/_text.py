"""A server's text: blob resources that are text, and the images inside texts.

A `blob` resource whose media type is text (`text/*`, JSON, XML, YAML, ...) is decoded (its
`charset`, else UTF-8) and read as the text it is, sanitized like any other text; one whose
bytes do not decode, or that sniff as an image, stays a blob.

Images inside a server's text: a serialized JSON value, a data URL in prose, bare base64.

Without this a text block would hand the model an image as base64 text, which is neither
pixels nor words. `text_images` finds the payloads and returns a way to write the text back
with each one replaced: a JSON text is written again (compact, its strings escaped so none can
start a line of its own) with each payload as its image's reference; a data URL in prose
becomes `[image N]`; a text that is nothing but an image's base64 becomes its reference.
"""

from __future__ import annotations

import binascii
import codecs
import json
import re
from base64 import b64decode
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

from ._inline import (
    InlineImage,
    as_reference,
    bare_image,
    data_url_spans,
    find_inline,
    replace_inline,
    sniffed,
)
from ._wire import BlobContents, Block, EmbeddedBlock, TextContents, ToolResult

__all__ = ["TextImages", "decoded_text_blobs", "json_text", "text_images"]

# JSON leaves these raw inside strings, and `str.splitlines()` breaks lines on them.
_RAW_LINE_BREAKS: Final = re.compile("[\x7f-\x9f\u2028\u2029]")

_TEXT_APPLICATIONS: Final = frozenset(
    {
        "json",
        "xml",
        "javascript",
        "ecmascript",
        "yaml",
        "x-yaml",
        "toml",
        "x-toml",
        "sql",
        "graphql",
        "x-sh",
        "x-httpd-php",
        "csv",
        "x-ndjson",
        "jsonl",
        "x-www-form-urlencoded",
    }
)
_CHARSET: Final = re.compile(r";\s*charset\s*=\s*\"?([A-Za-z0-9._:-]{1,40})", re.IGNORECASE)

Reference = Callable[[InlineImage], str]


def decoded_text_blobs(result: ToolResult) -> ToolResult:
    """`result` with every embedded blob of a text media type read as text; `result` itself
    when it has none."""
    content = tuple(_as_text(block) for block in result.content)
    if all(new is old for new, old in zip(content, result.content, strict=True)):
        return result
    return replace(result, content=content)


def is_text_media_type(declared: str | None) -> bool:
    essence = (declared or "").partition(";")[0].strip().lower()
    kind, _, subtype = essence.partition("/")
    if kind == "text":
        return bool(subtype)
    return kind == "application" and (
        subtype in _TEXT_APPLICATIONS or subtype.endswith(("+json", "+xml", "+yaml"))
    )


def _as_text(block: Block) -> Block:
    if not isinstance(block, EmbeddedBlock) or not isinstance(block.resource, BlobContents):
        return block
    resource = block.resource
    if not is_text_media_type(resource.mime_type):
        return block
    data = _blob_bytes(resource.blob)
    if data is None or sniffed(data).startswith("image/"):
        return block
    text = _text_of(data, resource.mime_type or "")
    if text is None:
        return block
    contents = TextContents(resource.uri, text, resource.mime_type, resource.meta)
    return replace(block, resource=contents)


def _blob_bytes(blob: str) -> bytes | None:
    try:
        return b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return None  # not base64: it stays a blob, and the note says what it is


def _text_of(data: bytes, declared: str) -> str | None:
    match = _CHARSET.search(declared)
    encoding = match.group(1) if match else "utf-8"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, ValueError):
        return None  # bytes that are not text in their declared encoding stay a blob


@dataclass(frozen=True)
class TextImages:
    """The payloads of one text, and how to write the text with them replaced."""

    text: str
    payloads: tuple[InlineImage, ...] = ()
    parsed: Any = None
    """The JSON value the text holds, when the payloads were found in one."""

    def rendered(self, reference: Reference, inline_label: Reference) -> str:
        """The text with each payload replaced: by `reference(payload)` inside JSON or for a
        text that is only base64, by `inline_label(payload)` in prose."""
        if not self.payloads:
            return self.text
        if self.parsed is not None:
            replaced = replace_inline(
                self.parsed, self.payloads, lambda found: as_reference(found, reference(found))
            )
            return json_text(replaced)
        if self.payloads[0].kind == "bare":
            return reference(self.payloads[0])
        return _prose(self.text, self.payloads, inline_label)


def text_images(text: str) -> TextImages:
    """The image payloads of `text`; no payloads (and nothing decoded twice) for plain text."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and ("base64" in text or '"data"' in text or '"blob"' in text):
        parsed = _json(stripped)
        found = find_inline(parsed) if parsed is not None else []
        if found:
            return TextImages(text, tuple(found), parsed)
    bare = bare_image(text)
    if bare is not None:
        return TextImages(text, (bare,))
    if "data:image/" in text:
        spans = data_url_spans(text)
        payloads = tuple(
            InlineImage((start, end), "data_url", data, declared)
            for start, end, data, declared in spans
            if (sniffed(data) or declared).startswith("image/")
        )
        return TextImages(text, payloads)
    return TextImages(text)


def json_text(value: Any) -> str:
    """Compact JSON on one line under any line-splitting rule (C1 controls, U+2028 and U+2029,
    which JSON leaves raw, are escaped); non-JSON values are shown with `repr`."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return _RAW_LINE_BREAKS.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        # Text that merely starts like JSON: it holds no JSON payloads.
        return None


def _prose(text: str, payloads: tuple[InlineImage, ...], label: Reference) -> str:
    """`text` with each data URL (its path holds the span) replaced by its label."""
    pieces: list[str] = []
    last = 0
    for payload in payloads:
        start, end = int(payload.path[0]), int(payload.path[1])
        pieces += (text[last:start], label(payload))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)
