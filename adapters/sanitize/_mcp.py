"""Sanitize MCP results and listings (`mcp.types` models) before the model reads them.

Every string the model may read is cleaned: content text, error text, embedded and read
resource text, resource-link and resource names, titles and descriptions, prompt messages, tool
descriptions and schemas, `structured_content`, and `_meta` on results, blocks and contents.
Base64 `data`/`blob` payloads are pixels or bytes, not text, and are never touched; nor are
identifiers the client sends back (tool and prompt names, URIs, cursors).

Each function returns its input itself when nothing changed, else a copy (`model_copy`); the
input is never mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ErrorData,
    GetPromptResult,
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
    """Clean a tool's title, description, schemas, annotation title and `_meta`; not its name.

    The whole input and output schemas are model-facing (descriptions, enum values, property
    names), so every string in them is cleaned; a tool that needs hidden characters in its
    schema to work was not usable safely anyway.
    """
    return _copy(
        tool,
        title=_optional(tool.title, TOOL, sanitizer),
        description=_optional(tool.description, TOOL, sanitizer),
        input_schema=sanitizer.value(tool.input_schema, TOOL),
        output_schema=sanitizer.value(tool.output_schema, TOOL),
        annotations=_tool_annotations(tool.annotations, sanitizer),
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
    """Clean a resource's name, title, description and `_meta`; not its URI."""
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
    """Clean every prompt of a `prompts/list` result (not the names), and its `_meta`."""
    return _copy(
        result,
        prompts=_each(result.prompts, lambda prompt: _prompt(prompt, sanitizer)),
        meta=sanitizer.meta(result.meta, META),
    )


def _block(block: ContentBlock, text_surface: str, sanitizer: Sanitizer) -> ContentBlock:
    if isinstance(block, ResourceLink):
        return _named(block, RESOURCE_LINK, sanitizer)
    meta = sanitizer.meta(block.meta, META)
    if isinstance(block, TextContent):
        return _copy(block, text=sanitizer.text(block.text, text_surface), meta=meta)
    if isinstance(block, EmbeddedResource):
        resource = _contents(block.resource, RESOURCE_TEXT, sanitizer)
        return _copy(block, resource=resource, meta=meta)
    # Image and audio blocks: `data` is base64 media, only `_meta` is text.
    return _copy(block, meta=meta)


def _contents(
    contents: TextResourceContents | BlobResourceContents, surface: str, sanitizer: Sanitizer
) -> TextResourceContents | BlobResourceContents:
    meta = sanitizer.meta(contents.meta, META)
    if isinstance(contents, TextResourceContents):
        return _copy(contents, text=sanitizer.text(contents.text, surface), meta=meta)
    return _copy(contents, meta=meta)


def _message(message: PromptMessage, sanitizer: Sanitizer) -> PromptMessage:
    return _copy(message, content=_block(message.content, PROMPT, sanitizer))


def _prompt(prompt: Prompt, sanitizer: Sanitizer) -> Prompt:
    return _copy(
        prompt,
        title=_optional(prompt.title, PROMPT, sanitizer),
        description=_optional(prompt.description, PROMPT, sanitizer),
        arguments=_each_optional(prompt.arguments, lambda item: _argument(item, sanitizer)),
        meta=sanitizer.meta(prompt.meta, META),
    )


def _argument(argument: PromptArgument, sanitizer: Sanitizer) -> PromptArgument:
    return _copy(
        argument,
        title=_optional(argument.title, PROMPT, sanitizer),
        description=_optional(argument.description, PROMPT, sanitizer),
    )


def _resource_template(template: ResourceTemplate, sanitizer: Sanitizer) -> ResourceTemplate:
    return _named(template, RESOURCE, sanitizer)


_Named = TypeVar("_Named", Resource, ResourceTemplate, ResourceLink)


def _named(item: _Named, surface: str, sanitizer: Sanitizer) -> _Named:
    """Resources, templates and links: name, title, description and `_meta` are text."""
    return _copy(
        item,
        name=sanitizer.text(item.name, surface),
        title=_optional(item.title, surface, sanitizer),
        description=_optional(item.description, surface, sanitizer),
        meta=sanitizer.meta(item.meta, META),
    )


def _tool_annotations(
    annotations: ToolAnnotations | None, sanitizer: Sanitizer
) -> ToolAnnotations | None:
    if annotations is None:
        return None
    return _copy(annotations, title=_optional(annotations.title, TOOL, sanitizer))


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
