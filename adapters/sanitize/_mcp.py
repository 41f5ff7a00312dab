"""Sanitize MCP results and listings (`mcp.types` models) before the model reads them.

Every string a server sends that may reach the model or a record is cleaned: content text,
error text, embedded and read resource text, resource-link and resource names, titles and
descriptions, prompt messages, tool descriptions and schemas, `structured_content`, `_meta` on
results, blocks and contents, and the technical fields (`FIELDS`): mime types, URIs and URI
templates, tool, prompt and argument names, icons and annotations. A name or URI that needed
cleaning no longer matches the server's, so using it fails at the server: the safe outcome
for an identifier that hid text. Left alone: base64 `data`/`blob` payloads (pixels or bytes,
not text), pagination cursors (sent back, never shown) and protocol literals (`type`, `role`).

Each function returns its input itself when nothing changed, else a copy (`model_copy`); the
input is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from mcp.types import (
    Annotations,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ErrorData,
    GetPromptResult,
    Icon,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    Resource,
    ResourceLink,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

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
    "sanitize_call_tool_result",
    "sanitize_error_data",
    "sanitize_get_prompt_result",
    "sanitize_list_prompts_result",
    "sanitize_list_resource_templates_result",
    "sanitize_list_resources_result",
    "sanitize_list_tools_result",
    "sanitize_read_resource_result",
    "sanitize_resource",
    "sanitize_tool",
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

_Model = TypeVar("_Model", bound=BaseModel)
_Item = TypeVar("_Item")


def sanitize_call_tool_result(result: CallToolResult, sanitizer: Sanitizer) -> CallToolResult:
    """Clean a `tools/call` result: content blocks, structured content and `_meta`."""
    text_surface = ERROR if result.is_error else TEXT
    return _copy(
        result,
        content=_each(result.content, lambda block: _block(block, text_surface, sanitizer)),
        structured_content=sanitizer.value(result.structured_content, STRUCTURED_CONTENT),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_error_data(error: ErrorData, sanitizer: Sanitizer) -> ErrorData:
    """Clean a JSON-RPC error a server returned, which an agent may show the model."""
    return _copy(
        error,
        message=sanitizer.text(error.message, ERROR),
        data=sanitizer.value(error.data, ERROR),
    )


def sanitize_read_resource_result(
    result: ReadResourceResult, sanitizer: Sanitizer
) -> ReadResourceResult:
    """Clean a `resources/read` result: text contents and `_meta`."""
    return _copy(
        result,
        contents=_each(result.contents, lambda item: _contents(item, RESOURCE_READ, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_get_prompt_result(result: GetPromptResult, sanitizer: Sanitizer) -> GetPromptResult:
    """Clean a `prompts/get` result: description, every message and `_meta`."""
    return _copy(
        result,
        description=_optional(result.description, PROMPT, sanitizer),
        messages=_each(result.messages, lambda message: _message(message, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_tool(tool: Tool, sanitizer: Sanitizer) -> Tool:
    """Clean a tool's name, title, description, schemas, annotation title, icons and `_meta`.

    The whole input and output schemas are model-facing (descriptions, enum values, property
    names), so every string in them is cleaned; a tool that needs hidden characters in its
    schema to work was not usable safely anyway.
    """
    return _copy(
        tool,
        name=sanitizer.text(tool.name, FIELDS),
        title=_optional(tool.title, TOOL, sanitizer),
        description=_optional(tool.description, TOOL, sanitizer),
        input_schema=sanitizer.value(tool.input_schema, TOOL),
        output_schema=sanitizer.value(tool.output_schema, TOOL),
        annotations=_tool_annotations(tool.annotations, sanitizer),
        icons=_icons(tool.icons, sanitizer),
        meta=sanitizer.meta(tool.meta, META),
    )


def sanitize_list_tools_result(result: ListToolsResult, sanitizer: Sanitizer) -> ListToolsResult:
    """Clean every tool of a `tools/list` result, and its `_meta`."""
    return _copy(
        result,
        tools=_each(result.tools, lambda tool: sanitize_tool(tool, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_resource(resource: Resource, sanitizer: Sanitizer) -> Resource:
    """Clean a resource's name, title, description, URI, mime type, icons and `_meta`."""
    return _named(resource, RESOURCE, sanitizer)


def sanitize_list_resources_result(
    result: ListResourcesResult, sanitizer: Sanitizer
) -> ListResourcesResult:
    """Clean every resource of a `resources/list` result, and its `_meta`."""
    return _copy(
        result,
        resources=_each(result.resources, lambda item: sanitize_resource(item, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_list_resource_templates_result(
    result: ListResourceTemplatesResult, sanitizer: Sanitizer
) -> ListResourceTemplatesResult:
    """Clean every template of a `resources/templates/list` result, and its `_meta`."""
    return _copy(
        result,
        resource_templates=_each(
            result.resource_templates, lambda item: _resource_template(item, sanitizer)
        ),
        meta=sanitizer.meta(result.meta, META),
    )


def sanitize_list_prompts_result(
    result: ListPromptsResult, sanitizer: Sanitizer
) -> ListPromptsResult:
    """Clean every prompt of a `prompts/list` result, and its `_meta`."""
    return _copy(
        result,
        prompts=_each(result.prompts, lambda prompt: _prompt(prompt, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def _block(block: ContentBlock, text_surface: str, sanitizer: Sanitizer) -> ContentBlock:
    if isinstance(block, ResourceLink):
        return _named(block, RESOURCE_LINK, sanitizer)
    meta = sanitizer.meta(block.meta, META)
    annotations = _annotations(block.annotations, sanitizer)
    if isinstance(block, TextContent):
        text = sanitizer.text(block.text, text_surface)
        return _copy(block, text=text, annotations=annotations, meta=meta)
    if isinstance(block, EmbeddedResource):
        resource = _contents(block.resource, RESOURCE_TEXT, sanitizer)
        return _copy(block, resource=resource, annotations=annotations, meta=meta)
    # Image and audio blocks: `data` is base64 media, not text.
    mime_type = sanitizer.text(block.mime_type, FIELDS)
    return _copy(block, mime_type=mime_type, annotations=annotations, meta=meta)


def _contents(
    contents: TextResourceContents | BlobResourceContents, surface: str, sanitizer: Sanitizer
) -> TextResourceContents | BlobResourceContents:
    fields = {
        "uri": sanitizer.text(contents.uri, FIELDS),
        "mime_type": _optional(contents.mime_type, FIELDS, sanitizer),
        "meta": sanitizer.meta(contents.meta, META),
    }
    if isinstance(contents, TextResourceContents):
        return _copy(contents, text=sanitizer.text(contents.text, surface), **fields)
    return _copy(contents, **fields)


def _message(message: PromptMessage, sanitizer: Sanitizer) -> PromptMessage:
    return _copy(message, content=_block(message.content, PROMPT, sanitizer))


def _prompt(prompt: Prompt, sanitizer: Sanitizer) -> Prompt:
    return _copy(
        prompt,
        name=sanitizer.text(prompt.name, FIELDS),
        title=_optional(prompt.title, PROMPT, sanitizer),
        description=_optional(prompt.description, PROMPT, sanitizer),
        arguments=_each_optional(prompt.arguments, lambda item: _argument(item, sanitizer)),
        icons=_icons(prompt.icons, sanitizer),
        meta=sanitizer.meta(prompt.meta, META),
    )


def _argument(argument: PromptArgument, sanitizer: Sanitizer) -> PromptArgument:
    return _copy(
        argument,
        name=sanitizer.text(argument.name, FIELDS),
        title=_optional(argument.title, PROMPT, sanitizer),
        description=_optional(argument.description, PROMPT, sanitizer),
    )


def _resource_template(template: ResourceTemplate, sanitizer: Sanitizer) -> ResourceTemplate:
    cleaned = _named(template, RESOURCE, sanitizer)
    return _copy(cleaned, uri_template=sanitizer.text(template.uri_template, FIELDS))


_Named = TypeVar("_Named", Resource, ResourceTemplate, ResourceLink)


def _named(item: _Named, surface: str, sanitizer: Sanitizer) -> _Named:
    """Resources, templates and links: name, title, description (text), URI (not for
    templates, whose `uri_template` the caller cleans), mime type, icons, annotations, `_meta`."""
    uri = None if isinstance(item, ResourceTemplate) else sanitizer.text(item.uri, FIELDS)
    return _copy(
        item,
        name=sanitizer.text(item.name, surface),
        title=_optional(item.title, surface, sanitizer),
        description=_optional(item.description, surface, sanitizer),
        mime_type=_optional(item.mime_type, FIELDS, sanitizer),
        icons=_icons(item.icons, sanitizer),
        annotations=_annotations(item.annotations, sanitizer),
        meta=sanitizer.meta(item.meta, META),
        **({} if uri is None else {"uri": uri}),
    )


def _tool_annotations(
    annotations: ToolAnnotations | None, sanitizer: Sanitizer
) -> ToolAnnotations | None:
    if annotations is None:
        return None
    return _copy(annotations, title=_optional(annotations.title, TOOL, sanitizer))


def _annotations(annotations: Annotations | None, sanitizer: Sanitizer) -> Annotations | None:
    if annotations is None:
        return None
    last_modified = _optional(annotations.last_modified, FIELDS, sanitizer)
    return _copy(annotations, last_modified=last_modified)


def _icons(icons: list[Icon] | None, sanitizer: Sanitizer) -> list[Icon] | None:
    return _each_optional(icons, lambda icon: _icon(icon, sanitizer))


def _icon(icon: Icon, sanitizer: Sanitizer) -> Icon:
    return _copy(
        icon,
        src=sanitizer.text(icon.src, FIELDS),
        mime_type=_optional(icon.mime_type, FIELDS, sanitizer),
        sizes=_each_optional(icon.sizes, lambda size: sanitizer.text(size, FIELDS)),
    )


def _optional(text: str | None, surface: str, sanitizer: Sanitizer) -> str | None:
    return None if text is None else sanitizer.text(text, surface)


def _each(items: list[_Item], clean: Callable[[_Item], _Item]) -> list[_Item]:
    cleaned = [clean(item) for item in items]
    return items if all(new is old for new, old in zip(cleaned, items, strict=True)) else cleaned


def _each_optional(
    items: list[_Item] | None, clean: Callable[[_Item], _Item]
) -> list[_Item] | None:
    return None if items is None else _each(items, clean)


def _copy(model: _Model, **fields: object) -> _Model:
    """`model` itself when every field is the same object, else a copy with the new values."""
    changed = {name: new for name, new in fields.items() if new is not getattr(model, name)}
    return model.model_copy(update=changed) if changed else model
