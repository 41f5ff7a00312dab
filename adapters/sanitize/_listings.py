"""Sanitize what the model reads besides tool results: tools, resources, prompts, errors.

Tool names, descriptions and schemas are the classic injection surface: they go into the
model's context before any tool runs. Each listing is cleaned in the MCP wire shape, so the
same code serves the official SDK's models of either generation (dumped by alias, cleaned,
validated back into the caller's own class), wire dicts (cleaned, returned as dicts) and lists
of either. A table per wire type says which surface each key's text is tallied under; a key
the table does not name (a later spec's field, a vendor extension) is cleaned in full as a
technical field. Left alone: pagination cursors (sent back, never shown), base64 payloads and
protocol literals (`type`, `role`, error `code`).

Each function returns its input itself when nothing changed, else a copy; the input is never
mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from visiongate.kernel._errors import VisiongateError

from ._sanitizer import Sanitizer

__all__ = [
    "ERROR",
    "FIELDS",
    "META",
    "PROMPT",
    "RESOURCE",
    "RESOURCE_LINK",
    "RESOURCE_READ",
    "RESOURCE_TEXT",
    "STRUCTURED_CONTENT",
    "TEXT",
    "TOOL",
    "ListingError",
    "sanitize_error_data",
    "sanitize_get_prompt_result",
    "sanitize_list_prompts_result",
    "sanitize_list_resource_templates_result",
    "sanitize_list_resources_result",
    "sanitize_list_tools_result",
    "sanitize_prompts",
    "sanitize_read_resource_result",
    "sanitize_resource",
    "sanitize_resources",
    "sanitize_tool",
    "sanitize_tools",
]

# Surfaces: the keys of the sanitizer's tally.
TEXT: Final = "text"
ERROR: Final = "error"
"""Text of a result with `is_error`, and protocol error messages."""
STRUCTURED_CONTENT: Final = "structured_content"
META: Final = "meta"
RESOURCE_TEXT: Final = "resource_text"
"""Text of a resource embedded in a result or a prompt."""
RESOURCE_LINK: Final = "resource_link"
RESOURCE_READ: Final = "resource_read"
"""Contents returned by `resources/read`."""
PROMPT: Final = "prompt"
TOOL: Final = "tool"
RESOURCE: Final = "resource"
"""Resources and resource templates from the list calls."""
FIELDS: Final = "fields"
"""Technical strings: mime types, URIs, tool/prompt/argument names, icons, annotations."""

_T = TypeVar("_T")
Cleaner = Callable[[Any, Sanitizer], Any]
Spec = Mapping[str, Cleaner]
_DROP: Final = object()


class ListingError(VisiongateError, ValueError):
    """Input that is not an MCP listing of the kind asked for; one line."""


# -- cleaners: one per kind of value ------------------------------------------------------------


def _text(surface: str) -> Cleaner:
    return lambda value, sanitizer: sanitizer.value(value, surface)


def _keep(value: Any, sanitizer: Sanitizer) -> Any:
    return value


def _meta(value: Any, sanitizer: Sanitizer) -> Any:
    if not isinstance(value, Mapping):
        return sanitizer.value(value, FIELDS)
    cleaned = sanitizer.meta(value, META)
    return _DROP if cleaned is None else cleaned


def _one(spec: Spec) -> Cleaner:
    def clean(value: Any, sanitizer: Sanitizer) -> Any:
        if not isinstance(value, Mapping):
            return sanitizer.value(value, FIELDS)
        return _object(value, spec, sanitizer)

    return clean


def _each(spec: Spec) -> Cleaner:
    one = _one(spec)

    def clean(value: Any, sanitizer: Sanitizer) -> Any:
        if not isinstance(value, list | tuple):
            return sanitizer.value(value, FIELDS)
        cleaned = [one(item, sanitizer) for item in value]
        return value if all(a is b for a, b in zip(cleaned, value, strict=True)) else cleaned

    return clean


def _object(wire: Mapping[str, Any], spec: Spec, sanitizer: Sanitizer) -> Mapping[str, Any]:
    """`wire` with each key cleaned by its spec entry (unknown keys: in full, as `fields`)."""
    cleaned: dict[str, Any] = {}
    changed = False
    for key, value in wire.items():
        clean_key = sanitizer.text(key, FIELDS) if isinstance(key, str) else key
        new = spec.get(key, _text(FIELDS))(value, sanitizer)
        changed = changed or new is not value or clean_key is not key
        if new is not _DROP:
            cleaned[clean_key] = new
    return cleaned if changed else wire


# -- the wire types ---------------------------------------------------------------------------

_COMMON: Final[Spec] = {"type": _keep, "_meta": _meta}
CONTENTS_READ: Final[Spec] = {
    **_COMMON,
    "text": _text(RESOURCE_READ),
    "blob": _keep,
}
_CONTENTS_EMBEDDED: Final[Spec] = {**CONTENTS_READ, "text": _text(RESOURCE_TEXT)}
_PROMPT_BLOCK: Final[Spec] = {
    **_COMMON,
    "text": _text(PROMPT),
    "data": _keep,
    "name": _text(RESOURCE_LINK),
    "title": _text(RESOURCE_LINK),
    "description": _text(RESOURCE_LINK),
    "resource": _one(_CONTENTS_EMBEDDED),
}
TOOL_SPEC: Final[Spec] = {
    **_COMMON,
    "title": _text(TOOL),
    "description": _text(TOOL),
    "inputSchema": _text(TOOL),
    "outputSchema": _text(TOOL),
    "annotations": _one({"title": _text(TOOL)}),
}
RESOURCE_SPEC: Final[Spec] = {
    **_COMMON,
    "name": _text(RESOURCE),
    "title": _text(RESOURCE),
    "description": _text(RESOURCE),
}
PROMPT_SPEC: Final[Spec] = {
    **_COMMON,
    "title": _text(PROMPT),
    "description": _text(PROMPT),
    "arguments": _each({"title": _text(PROMPT), "description": _text(PROMPT)}),
}
_PAGE: Final[Spec] = {"_meta": _meta, "nextCursor": _keep}
LIST_TOOLS: Final[Spec] = {**_PAGE, "tools": _each(TOOL_SPEC)}
LIST_RESOURCES: Final[Spec] = {**_PAGE, "resources": _each(RESOURCE_SPEC)}
LIST_TEMPLATES: Final[Spec] = {**_PAGE, "resourceTemplates": _each(RESOURCE_SPEC)}
LIST_PROMPTS: Final[Spec] = {**_PAGE, "prompts": _each(PROMPT_SPEC)}
READ_RESOURCE: Final[Spec] = {"_meta": _meta, "contents": _each(CONTENTS_READ)}
GET_PROMPT: Final[Spec] = {
    "_meta": _meta,
    "description": _text(PROMPT),
    "messages": _each({"role": _keep, "content": _one(_PROMPT_BLOCK)}),
}
ERROR_SPEC: Final[Spec] = {"code": _keep, "message": _text(ERROR), "data": _text(ERROR)}


# -- any shape in, the same shape out -----------------------------------------------------------


def clean_listing(listing: _T, spec: Spec, sanitizer: Sanitizer) -> _T:
    """`listing` (an SDK model, a wire dict, or a list or tuple of them) cleaned by `spec`, in
    the shape it came in; the same object when nothing changed."""
    cleaned: _T = _clean_any(listing, lambda wire: spec, sanitizer)
    return cleaned


def _clean_any(
    listing: Any, pick: Callable[[Mapping[str, Any]], Spec], sanitizer: Sanitizer
) -> Any:
    if isinstance(listing, Mapping):
        return _object(listing, pick(listing), sanitizer)
    if isinstance(listing, list | tuple):
        cleaned = [_clean_any(item, pick, sanitizer) for item in listing]
        if all(new is old for new, old in zip(cleaned, listing, strict=True)):
            return listing
        return tuple(cleaned) if isinstance(listing, tuple) else cleaned
    wire = _wire_of(listing)
    cleaned_wire = _object(wire, pick(wire), sanitizer)
    if cleaned_wire is wire:
        return listing
    return type(listing).model_validate(cleaned_wire)


def _wire_of(model: Any) -> Mapping[str, Any]:
    dump = getattr(model, "model_dump", None)
    if not callable(dump) or not callable(getattr(type(model), "model_validate", None)):
        raise ListingError(
            f"expected an MCP model, a wire dict or a list of them, not `{type(model).__name__}`"
        )
    try:
        wire = dump(by_alias=True, mode="json", exclude_none=True)
    except ValueError:
        # A value JSON cannot carry (in `_meta`, say): dumped as is, and the sanitizer drops it.
        wire = dump(by_alias=True, exclude_none=True)
    return wire if isinstance(wire, Mapping) else {}


def _pick(kinds: Sequence[tuple[str, Spec]], single: Spec) -> Callable[[Mapping[str, Any]], Spec]:
    """The spec of a listing by the key only it has (`tools`, `messages`, ...), else `single`."""

    def pick(wire: Mapping[str, Any]) -> Spec:
        return next((spec for key, spec in kinds if key in wire), single)

    return pick


_TOOLS: Final = _pick([("tools", LIST_TOOLS)], TOOL_SPEC)
_RESOURCES: Final = _pick(
    [
        ("resources", LIST_RESOURCES),
        ("resourceTemplates", LIST_TEMPLATES),
        ("contents", READ_RESOURCE),
    ],
    RESOURCE_SPEC,
)
_PROMPTS: Final = _pick([("prompts", LIST_PROMPTS), ("messages", GET_PROMPT)], PROMPT_SPEC)


def sanitize_tools(listing: _T, sanitizer: Sanitizer) -> _T:
    """A `tools/list` result, a tool, or a list of tools, cleaned."""
    cleaned: _T = _clean_any(listing, _TOOLS, sanitizer)
    return cleaned


def sanitize_resources(listing: _T, sanitizer: Sanitizer) -> _T:
    """A `resources/list`, `resources/templates/list` or `resources/read` result, a resource,
    a template, or a list of them, cleaned."""
    cleaned: _T = _clean_any(listing, _RESOURCES, sanitizer)
    return cleaned


def sanitize_prompts(listing: _T, sanitizer: Sanitizer) -> _T:
    """A `prompts/list` or `prompts/get` result, a prompt, or a list of prompts, cleaned."""
    cleaned: _T = _clean_any(listing, _PROMPTS, sanitizer)
    return cleaned


# Named entry points, one per wire type (the SDK's names), for callers that know the type.


def sanitize_list_tools_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, LIST_TOOLS, sanitizer)


def sanitize_tool(tool: _T, sanitizer: Sanitizer) -> _T:
    """The whole input and output schemas are model-facing (descriptions, enum values,
    property names), so every string in them is cleaned."""
    return clean_listing(tool, TOOL_SPEC, sanitizer)


def sanitize_list_resources_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, LIST_RESOURCES, sanitizer)


def sanitize_resource(resource: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(resource, RESOURCE_SPEC, sanitizer)


def sanitize_list_resource_templates_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, LIST_TEMPLATES, sanitizer)


def sanitize_read_resource_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, READ_RESOURCE, sanitizer)


def sanitize_list_prompts_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, LIST_PROMPTS, sanitizer)


def sanitize_get_prompt_result(result: _T, sanitizer: Sanitizer) -> _T:
    return clean_listing(result, GET_PROMPT, sanitizer)


def sanitize_error_data(error: _T, sanitizer: Sanitizer) -> _T:
    """A JSON-RPC error a server returned, which an agent may show the model."""
    return clean_listing(error, ERROR_SPEC, sanitizer)
