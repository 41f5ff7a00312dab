"""Sanitize MCP tool results (the core's wire-shaped `ToolResult`) before the model reads them.

Every string a server sends that may reach the model or a record is cleaned: content text,
error text, embedded resource text, resource-link names, titles and descriptions,
`structured_content`, `_meta` on results, blocks and contents, and the technical fields
(`FIELDS`): mime types, URIs, icons and annotations. A name or URI that needed cleaning no
longer matches the server's, so using it fails at the server: the safe outcome for an
identifier that hid text. Left alone: base64 `data`/`blob` payloads (pixels or bytes, not
text) and protocol literals (`type`). Listings (tools, resources, prompts) and protocol errors
are cleaned by `_listings`, in the wire shape, whatever SDK made them.

Each function returns its input itself when nothing changed, else a copy; the input is never
mutated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..wire._edge import read_tool_result
from ..wire._wire import (
    Annotations,
    BlobContents,
    Block,
    EmbeddedBlock,
    ResourceLinkBlock,
    TextBlock,
    TextContents,
    ToolResult,
    UnknownBlock,
)
from ._listings import (
    ERROR,
    FIELDS,
    META,
    RESOURCE_LINK,
    RESOURCE_TEXT,
    STRUCTURED_CONTENT,
    TEXT,
)
from ._sanitizer import Sanitizer

__all__ = ["sanitize_call_tool_result"]

_Value = TypeVar("_Value")
_Item = TypeVar("_Item")


def sanitize_call_tool_result(result: object, sanitizer: Sanitizer) -> ToolResult:
    """Clean a `tools/call` result (any shape `read_tool_result` takes): content blocks,
    structured content and `_meta`."""
    result = read_tool_result(result)
    text_surface = ERROR if result.is_error else TEXT
    return _copy(
        result,
        content=_each(result.content, lambda block: _block(block, text_surface, sanitizer)),
        structured_content=sanitizer.value(result.structured_content, STRUCTURED_CONTENT),
        meta=sanitizer.meta(result.meta, META),
    )


def _block(block: Block, text_surface: str, sanitizer: Sanitizer) -> Block:
    if isinstance(block, UnknownBlock):
        return _copy(block, type=sanitizer.text(block.type, FIELDS))
    if isinstance(block, ResourceLinkBlock):
        return _link(block, sanitizer)
    meta = sanitizer.meta(block.meta, META)
    annotations = _annotations(block.annotations, sanitizer)
    if isinstance(block, TextBlock):
        text = sanitizer.text(block.text, text_surface)
        return _copy(block, text=text, annotations=annotations, meta=meta)
    if isinstance(block, EmbeddedBlock):
        resource = _contents(block.resource, RESOURCE_TEXT, sanitizer)
        return _copy(block, resource=resource, annotations=annotations, meta=meta)
    # Image and audio blocks: `data` is base64 media, not text.
    mime_type = sanitizer.text(block.mime_type, FIELDS)
    return _copy(block, mime_type=mime_type, annotations=annotations, meta=meta)


def _contents(
    contents: TextContents | BlobContents, surface: str, sanitizer: Sanitizer
) -> TextContents | BlobContents:
    fields: dict[str, Any] = {
        "uri": sanitizer.text(contents.uri, FIELDS),
        "mime_type": _optional(contents.mime_type, FIELDS, sanitizer),
        "meta": sanitizer.meta(contents.meta, META),
    }
    if isinstance(contents, TextContents):
        return _copy(contents, text=sanitizer.text(contents.text, surface), **fields)
    return _copy(contents, **fields)


def _link(link: ResourceLinkBlock, sanitizer: Sanitizer) -> ResourceLinkBlock:
    icons = link.icons
    cleaned_icons = None if icons is None else _each(icons, lambda i: _icon(i, sanitizer))
    return _copy(
        link,
        uri=sanitizer.text(link.uri, FIELDS),
        name=sanitizer.text(link.name, RESOURCE_LINK),
        title=_optional(link.title, RESOURCE_LINK, sanitizer),
        description=_optional(link.description, RESOURCE_LINK, sanitizer),
        mime_type=_optional(link.mime_type, FIELDS, sanitizer),
        icons=cleaned_icons,
        annotations=_annotations(link.annotations, sanitizer),
        meta=sanitizer.meta(link.meta, META),
    )


def _icon(icon: Mapping[str, Any], sanitizer: Sanitizer) -> Mapping[str, Any]:
    cleaned: Mapping[str, Any] = sanitizer.value(icon, FIELDS)
    return cleaned


def _annotations(annotations: Annotations | None, sanitizer: Sanitizer) -> Annotations | None:
    if annotations is None:
        return None
    last_modified = _optional(annotations.last_modified, FIELDS, sanitizer)
    return _copy(annotations, last_modified=last_modified)


def _optional(text: str | None, surface: str, sanitizer: Sanitizer) -> str | None:
    return None if text is None else sanitizer.text(text, surface)


def _each(items: tuple[_Item, ...], clean: Callable[[_Item], _Item]) -> tuple[_Item, ...]:
    cleaned = tuple(clean(item) for item in items)
    return items if all(new is old for new, old in zip(cleaned, items, strict=True)) else cleaned


def _copy(value: _Value, **fields: object) -> _Value:
    """`value` itself when every field is the same object, else a copy with the new values."""
    changed = {name: new for name, new in fields.items() if new is not getattr(value, name)}
    return dataclasses.replace(value, **changed) if changed else value  # type: ignore[type-var]
