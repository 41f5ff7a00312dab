"""The edge: any MCP tool result in, the core's wire-shaped `ToolResult` out, validated once.

`read_tool_result` takes the official SDK's `CallToolResult` of either generation (1.x spells
fields `mimeType`, 2.x `mime_type`), a dict straight off the wire (camelCase, `_meta`; a
snake_case key is read too, so an `is_error` is never lost), or any object with the same fields
(the FastMCP client's dataclass, a `SimpleNamespace`); content blocks may be any of these too.
Nothing here imports an SDK. A malformed result raises `InvalidToolResult` naming the first
bad field by its wire name (`content[1].mimeType`); unknown keys are ignored, as the spec asks
of new fields, and an unknown content type becomes an `UnknownBlock` shown as a note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from ._wire import (
    Annotations,
    AudioBlock,
    BlobContents,
    Block,
    EmbeddedBlock,
    ImageBlock,
    InvalidToolResult,
    ResourceLinkBlock,
    TextBlock,
    TextContents,
    ToolResult,
    UnknownBlock,
)

__all__ = ["InvalidToolResult", "read_tool_result"]

_MISSING: Final = object()


def read_tool_result(result: object) -> ToolResult:
    """Validate `result` (an SDK model of any version, a wire dict, or an object with the same
    fields) into a `ToolResult`; raises `InvalidToolResult` naming the first bad field.

    A `_meta` that is not an object is dropped with a note (`ToolResult.dropped`) and the rest
    of the result is kept, as the production agent does: metadata never costs the content."""
    if isinstance(result, ToolResult):
        return result
    dropped: list[str] = []
    while True:
        try:
            return replace(_read(result), dropped=tuple(dropped))
        except _BadMeta as bad:
            pruned = _without(result, bad.keys)
            if pruned is None:
                raise InvalidToolResult(str(bad)) from None
            dropped.append(f"[`{bad.where}` was {bad.kind}, not an object: dropped]")
            result = pruned


class _BadMeta(InvalidToolResult):
    """A `_meta` that is not an object, at `keys` (the wire path)."""

    def __init__(self, where: str, value: Any) -> None:
        super().__init__(f"invalid tool result: `{where}` must be an object, not {_kind(value)}")
        self.where, self.kind = where, _kind(value)
        self.keys = tuple(
            int(part[1:-1]) if part.startswith("[") else part
            for part in re.findall(r"\[\d+\]|[^.\[\]]+", where)
        )


def _without(source: Any, keys: tuple[str | int, ...]) -> Any:
    """A copy of a wire-dict result without the field at `keys`; None when a level on the way
    is not a dict or list (an SDK model validates its own `_meta`, so that is not needed)."""
    if isinstance(source, Mapping):
        if len(keys) == 1:
            return {key: value for key, value in source.items() if key != keys[0]}
        child = _without(source.get(keys[0]), keys[1:])
        return None if child is None else {**source, keys[0]: child}
    if isinstance(source, list) and isinstance(keys[0], int) and len(keys) > 1:
        child = _without(source[keys[0]], keys[1:])
        return None if child is None else [*source[: keys[0]], child, *source[keys[0] + 1 :]]
    return None


def _read(result: object) -> ToolResult:
    if isinstance(result, str | bytes | Sequence) or _field(result, "content") is _MISSING:
        raise InvalidToolResult(
            f"invalid tool result: expected an object with `content`, got {_kind(result)}"
        )
    content = _sequence(result, "content", "content")
    return ToolResult(
        content=tuple(_block(item, f"content[{i}]") for i, item in enumerate(content)),
        structured_content=_optional_value(result, "structuredContent"),
        is_error=_boolean(result, "isError", "isError"),
        meta=_meta(result, "_meta"),
    )


# -- reading fields, whatever holds them -------------------------------------------------------


def _attributes(wire_name: str) -> tuple[str, ...]:
    """Attribute spellings of a wire field: SDK 2.x and dataclasses use snake_case, 1.x the
    wire's camelCase; `_meta` is `meta` on every model."""
    if wire_name == "_meta":
        return ("meta", "_meta")
    snake = "".join(f"_{char.lower()}" if char.isupper() else char for char in wire_name)
    return (snake, wire_name) if snake != wire_name else (wire_name,)


def _field(source: object, wire_name: str) -> Any:
    """A field by its wire name; a dict's snake_case key counts too, so an `is_error` written
    the Python way is never silently read as a success."""
    names = _attributes(wire_name)
    if isinstance(source, Mapping):
        return next((source[name] for name in (wire_name, *names) if name in source), _MISSING)
    for attribute in names:
        value = getattr(source, attribute, _MISSING)
        if value is not _MISSING:
            return value
    return _MISSING


def _present(source: object, wire_name: str) -> Any:
    """The field's value, `_MISSING` when absent or null (null means absent in MCP)."""
    value = _field(source, wire_name)
    return _MISSING if value is None else value


def _fail(path: str, expected: str, value: Any) -> InvalidToolResult:
    if value is _MISSING:
        return InvalidToolResult(f"invalid tool result: `{path}` is required")
    return InvalidToolResult(
        f"invalid tool result: `{path}` must be {expected}, not {_kind(value)}"
    )


def _kind(value: Any) -> str:
    """A value's JSON kind, for messages (never a Python type name)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str | bytes):
        return "a string" if isinstance(value, str) else "raw bytes"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Sequence):
        return "an array"
    return "a value of another kind"


def _string(source: object, name: str, path: str) -> str:
    value = _present(source, name)
    if isinstance(value, str):
        return value
    if name in ("uri", "uriTemplate") and hasattr(value, "unicode_string"):
        # SDK 1.x types URIs as pydantic's `AnyUrl`; its text is the URI.
        return str(value)
    raise _fail(path, "a string", value)


def _optional_string(source: object, name: str, path: str) -> str | None:
    return None if _present(source, name) is _MISSING else _string(source, name, path)


def _boolean(source: object, name: str, path: str) -> bool:
    value = _present(source, name)
    if value is _MISSING:
        return False
    if not isinstance(value, bool):
        raise _fail(path, "a boolean", value)
    return value


def _number(source: object, name: str, path: str) -> float | None:
    value = _present(source, name)
    if value is _MISSING:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(path, "a number", value)
    return value


def _sequence(source: object, name: str, path: str) -> Sequence[Any]:
    value = _present(source, name)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise _fail(path, "an array", value)
    return value


def _object(source: object, name: str, path: str) -> Mapping[str, Any] | None:
    value = _present(source, name)
    if value is _MISSING:
        return None
    if isinstance(value, Mapping):
        plain: dict[str, Any] = _plain(value)
        return plain
    dumped = _dumped(value)
    if dumped is None:
        raise _fail(path, "an object", value)
    return dumped


def _meta(source: object, path: str) -> Mapping[str, Any] | None:
    """`_meta`, which the caller may drop when it is not an object (`_BadMeta`)."""
    try:
        return _object(source, "_meta", path)
    except InvalidToolResult:
        raise _BadMeta(path, _present(source, "_meta")) from None


def _dumped(value: Any) -> dict[str, Any] | None:
    """A pydantic model (an SDK `Icon`, say) as its wire dict; None for anything else."""
    dump = getattr(value, "model_dump", None)
    if not callable(dump):
        return None
    dumped = dump(by_alias=True, mode="json", exclude_none=True)
    return dumped if isinstance(dumped, dict) else None


def _optional_value(source: object, name: str) -> Any:
    value = _present(source, name)
    return None if value is _MISSING else _plain(value)


def _plain(value: Any) -> Any:
    """JSON-like data with every mapping a dict, so the sanitizer walks all of it; `value`
    itself when it already is."""
    if isinstance(value, Mapping):
        items = {key: _plain(item) for key, item in value.items()}
        unchanged = isinstance(value, dict) and all(items[k] is v for k, v in value.items())
        return value if unchanged else items
    if isinstance(value, list | tuple):
        converted = [_plain(item) for item in value]
        if all(new is old for new, old in zip(converted, value, strict=True)):
            return value
        return tuple(converted) if isinstance(value, tuple) else converted
    return value


# -- blocks --------------------------------------------------------------------------------------


def _block(item: object, path: str) -> Block:
    if isinstance(item, str | bytes | Sequence) or item is None:
        raise _fail(path, "a content block (an object with `type`)", item)
    kind = _string(item, "type", f"{path}.type")
    reader = _BLOCK_READERS.get(kind)
    return reader(item, path) if reader is not None else UnknownBlock(kind)


def _annotations(source: object, path: str) -> Annotations | None:
    value = _present(source, "annotations")
    if value is _MISSING:
        return None
    if isinstance(value, str | bytes | Sequence):
        raise _fail(f"{path}.annotations", "an object", value)
    audience: tuple[str, ...] | None = None
    if _present(value, "audience") is not _MISSING:
        items = _sequence(value, "audience", f"{path}.annotations.audience")
        audience = tuple(
            _checked_string(role, f"{path}.annotations.audience[{i}]")
            for i, role in enumerate(items)
        )
    return Annotations(
        audience=audience,
        priority=_number(value, "priority", f"{path}.annotations.priority"),
        last_modified=_optional_string(value, "lastModified", f"{path}.annotations.lastModified"),
    )


def _checked_string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, "a string", value)
    return value


def _text_block(item: object, path: str) -> TextBlock:
    return TextBlock(
        text=_string(item, "text", f"{path}.text"),
        annotations=_annotations(item, path),
        meta=_meta(item, f"{path}._meta"),
    )


def _image_block(item: object, path: str) -> ImageBlock:
    return ImageBlock(
        data=_string(item, "data", f"{path}.data"),
        mime_type=_string(item, "mimeType", f"{path}.mimeType"),
        annotations=_annotations(item, path),
        meta=_meta(item, f"{path}._meta"),
    )


def _audio_block(item: object, path: str) -> AudioBlock:
    image = _image_block(item, path)
    return AudioBlock(image.data, image.mime_type, image.annotations, image.meta)


def _link_block(item: object, path: str) -> ResourceLinkBlock:
    size = _number(item, "size", f"{path}.size")
    return ResourceLinkBlock(
        uri=_string(item, "uri", f"{path}.uri"),
        name=_string(item, "name", f"{path}.name"),
        title=_optional_string(item, "title", f"{path}.title"),
        description=_optional_string(item, "description", f"{path}.description"),
        mime_type=_optional_string(item, "mimeType", f"{path}.mimeType"),
        size=int(size) if size is not None else None,
        icons=_icons(item, path),
        annotations=_annotations(item, path),
        meta=_meta(item, f"{path}._meta"),
    )


def _icons(item: object, path: str) -> tuple[Mapping[str, Any], ...] | None:
    if _present(item, "icons") is _MISSING:
        return None
    icons = _sequence(item, "icons", f"{path}.icons")
    return tuple(
        _object({"icon": icon}, "icon", f"{path}.icons[{i}]") or {} for i, icon in enumerate(icons)
    )


def _embedded_block(item: object, path: str) -> EmbeddedBlock:
    resource = _present(item, "resource")
    where = f"{path}.resource"
    if resource is _MISSING or isinstance(resource, str | bytes | Sequence):
        raise _fail(where, "an object", resource)
    return EmbeddedBlock(
        resource=_contents(resource, where),
        annotations=_annotations(item, path),
        meta=_meta(item, f"{path}._meta"),
    )


def _contents(resource: object, path: str) -> TextContents | BlobContents:
    uri = _string(resource, "uri", f"{path}.uri")
    mime_type = _optional_string(resource, "mimeType", f"{path}.mimeType")
    meta = _meta(resource, f"{path}._meta")
    if _present(resource, "text") is not _MISSING:
        return TextContents(uri, _string(resource, "text", f"{path}.text"), mime_type, meta)
    if _present(resource, "blob") is not _MISSING:
        return BlobContents(uri, _string(resource, "blob", f"{path}.blob"), mime_type, meta)
    raise InvalidToolResult(f"invalid tool result: `{path}` needs `text` or `blob`")


_BLOCK_READERS: Final[Mapping[str, Callable[[object, str], Block]]] = {
    "text": _text_block,
    "image": _image_block,
    "audio": _audio_block,
    "resource_link": _link_block,
    "resource": _embedded_block,
}
