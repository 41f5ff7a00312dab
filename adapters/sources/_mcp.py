"""Route an MCP tool result: validate, sanitize, cache its images, carry out the gate's lane.

The result may come from any SDK version or framework (`wire._wire.read_tool_result` takes
the SDK's models, wire dicts and objects with the same fields); it is validated once, here,
and everything after reads the one wire-shaped `ToolResult`.

Choices an agent developer should know:

- Images to attach are the bytes this call decoded and wrote to the cache; a `MEDIA:` path in
  the server's text is only text. Every image keeps a `MEDIA:<path>` line in the text half.
- Native lane: up to `max_images` images are fitted to the route and attached (the payload
  guard has the last word, before the record is written); the others stay as paths, with a
  note saying why. A caller that takes a string (`Router.mcp_text`) cannot receive pixels:
  its images stay as paths and none is processed. Text lane: `reference` leaves the paths,
  `describe` asks the auxiliary backend about up to `max_images` of them, and each
  description comes before the tool's own text, marked with the image it describes.
- Blocks whose `annotations.audience` leaves out the assistant are not for the model: the
  client gets them with their annotations (`execution.user_only`), the model a note counting
  them; their images are cached but never attached, described or (unless `reference`) named.
- An `is_error` result stays text: its images are cached and referenced, never attached.
- `structured_content` is a second copy of the result (`wire._copies`): an image in it is the
  line the model reads for it (its `MEDIA:` path) in place of the base64, whatever the lane
  (a client may hand that copy to the model as text; the pixels are in the content); the
  server's `MEDIA:` lines in it are marked. With the tool's `output_schema`, the copy is
  checked against it and goes to the client (`to_mcp`); without one it is a JSON line of the
  text (only when no text block holds it). `_meta` likewise, never with pixels.
- Text blobs are read as text; audio passes to the client as it came.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._routed import RoutedResult, json_line
from ..images import BatchResult, ProcessedImage
from ..sanitize._mcp import sanitize_call_tool_result
from ..sanitize._sanitizer import Sanitizer
from ..vision import DescriptionNote
from ..wire._blocks import FoundImage, ReadResult, hidden_note, read_result
from ..wire._edge import read_tool_result
from ..wire._text import decoded_text_blobs
from ..wire._wire import EmbeddedBlock, TextBlock, TextContents, ToolResult
from ._lane import LaneContext, attached_summary, description_block, holds_images, image_label
from ._mcp_client import Copies, Shares, client_parts, schema_check, structured_record
from ._user import user_parts

__all__ = ["route_mcp"]


@dataclass
class _Outcome:
    """What carrying out the lane produced; filled by one of the lane functions."""

    action: str
    notes: list[str] = field(default_factory=list)
    images: list[ProcessedImage] = field(default_factory=list)
    descriptions: list[DescriptionNote] = field(default_factory=list)
    attached: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    described: list[dict[str, Any]] = field(default_factory=list)

    def refuse(self, found: FoundImage, reason: str) -> None:
        self.notes.append(f"[image {found.index} not attached: {reason}]")
        self.refused.append({"index": found.index, "reason": reason})


async def route_mcp(
    result: object,
    context: LaneContext,
    *,
    tool_name: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> RoutedResult:
    """Route one MCP tool result for the decision in `context`; raises `InvalidToolResult`
    (a `ValueError` naming the first bad field) when `result` is not shaped like one.
    `output_schema`: the tool's declared one; the routed structured content is checked
    against it and handed to the client."""
    sanitizer = context.sanitizer()
    checked = decoded_text_blobs(read_tool_result(result))
    # Megabytes of hostile text cost the sanitizer milliseconds to seconds: on a thread, so
    # that one result never stalls another session's messages (the caller's deadline holds).
    clean = (
        await asyncio.to_thread(sanitize_call_tool_result, checked, sanitizer)
        if _text_chars(checked) > OFF_LOOP_TEXT_CHARS
        else sanitize_call_tool_result(checked, sanitizer)
    )
    user_only = context.execution.user_only
    # Decoding, hashing and caching the images: on the image workers, never on the loop.
    read = await context.off_loop(holds_images(clean), read_result, clean, context.cache, user_only)
    declared = output_schema is not None
    shares = Shares.of(read, context.result_budget)
    user = await user_parts(read, context, shares.user)
    outcome = await _carry_out(read, clean.is_error, shares.for_model(context, user))
    described, marked = _descriptions(outcome, sanitizer)
    copies = Copies.of(read)
    text = _compose(read, outcome, clean, described, copies, declared)
    # The schema and the content are the server's: checked off the loop, under a bound.
    problem = (
        await asyncio.to_thread(schema_check, output_schema, copies.structured, clean)
        if declared
        else None
    )
    execution = _execution(read, outcome, clean.is_error, tool_name)
    execution |= {
        "unverified_media_lines": read.unverified_media_lines + marked,
        "structured_content": structured_record(read, declared, problem),
        "user_only": {"mode": user_only, "parts": read.hidden_texts, "images": user.images},
    }
    return RoutedResult(
        source=context.source,
        lane=context.lane,
        text=text,
        route=context.route,
        images=tuple(outcome.images),
        descriptions=tuple(outcome.descriptions),
        structured_content=copies.structured,
        meta=copies.meta,
        is_error=clean.is_error,
        media_paths=_model_paths(read),
        tool_name=tool_name,
        record=context.record(execution, sanitizer.counts()),
        api=context.payload_api,
        client=client_parts(read, outcome.attached, user, declared, problem),
        server_lines=_server_lines(clean),
    )


OFF_LOOP_TEXT_CHARS = 256 * 1024
"""Text beyond this many characters is sanitized off the event loop (issue 37)."""


def _text_chars(result: ToolResult) -> int:
    """The characters of the result's text blocks and embedded text resources."""
    total = 0
    for block in result.content:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, EmbeddedBlock) and isinstance(block.resource, TextContents):
            total += len(block.resource.text)
    return total


def _server_lines(clean: ToolResult) -> frozenset[str]:
    """The lines of the tool's own text: its text blocks and embedded text resources."""
    texts: list[str] = []
    for block in clean.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, EmbeddedBlock) and isinstance(block.resource, TextContents):
            texts.append(block.resource.text)
    return frozenset(line for text in texts for line in text.split("\n"))


def _model_paths(read: ReadResult) -> tuple[str, ...]:
    """The `MEDIA:` paths the model is shown (a user-only image's only with `reference`)."""
    shown = read.user_only == "reference"
    return tuple(
        found.path for found in read.images if found.path is not None and (found.for_model or shown)
    )


def _descriptions(outcome: _Outcome, sanitizer: Sanitizer) -> tuple[list[str], int]:
    """The descriptions as lines that go before the tool's own text, each framed with the
    image it describes; and how many `MEDIA:` lines in them had to be marked."""
    lines: list[str] = []
    marked = 0
    for note, done in zip(outcome.descriptions, outcome.described, strict=True):
        name = f"image {done['index']}" + (f", {done['part']}" if "part" in done else "")
        block, count = description_block(name, note.media_path, note.text, sanitizer)
        lines += block
        marked += count
    return lines, marked


async def _carry_out(read: ReadResult, is_error: bool, context: LaneContext) -> _Outcome:
    if is_error:
        return _error_result(read)
    if context.lane == "native" and context.delivery == "string":
        return _string_caller(read, context)
    if context.lane == "native":
        return await _native(read, context)
    if context.text_action == "describe":
        return await _describe(read, context)
    return _reference(read, context)


def _usable(read: ReadResult, outcome: _Outcome) -> list[FoundImage]:
    """Images that may reach the model; the others are recorded as refused here (a user-only
    image without a note: the note on the user's parts covers it)."""
    usable = []
    for found in read.images:
        if not found.for_model:
            outcome.refused.append({"index": found.index, "reason": "for the user only (audience)"})
        elif found.problem is not None:
            outcome.refused.append({"index": found.index, "reason": found.problem})
        else:
            usable.append(found)
    return usable


def _error_result(read: ReadResult) -> _Outcome:
    outcome = _Outcome("error_text")
    for found in _usable(read, outcome):
        outcome.refuse(found, "the tool reported an error, so its result stays text")
    return outcome


async def _native(read: ReadResult, context: LaneContext) -> _Outcome:
    outcome = _Outcome("attach")
    usable = _usable(read, outcome)
    if not usable:
        return outcome
    batch = await context.attach([found.data for found in usable])
    _apply_batch(batch, usable, outcome, context)
    await _uncovered(batch, usable, outcome, context)
    return outcome


async def _uncovered(
    batch: BatchResult, usable: list[FoundImage], outcome: _Outcome, context: LaneContext
) -> None:
    """What tiles leave of tall captures: a note each, and descriptions where the lane says."""
    for position, part in batch.uncovered:
        found = usable[position]
        notes, described = await context.uncovered(
            f"image {found.index}", found.data, found.path, part
        )
        outcome.notes += notes
        for shown, note in described:
            outcome.descriptions.append(note)
            outcome.described.append(
                {
                    "index": found.index,
                    "part": shown,
                    "ok": note.ok,
                    "backend": note.backend,
                    "reason": note.reason,
                }
            )


def _apply_batch(
    batch: BatchResult, usable: list[FoundImage], outcome: _Outcome, context: LaneContext
) -> None:
    for position, image in zip(batch.attached_indexes, batch.attached, strict=True):
        found = usable[position]
        outcome.images.append(image)
        outcome.notes.append(
            f"[image {found.index} attached: {image_label(image)}; {image.scale_note}]"
        )
        outcome.attached.append(attached_summary(found.index, image, len(found.data)))
    for position, refused in batch.refused:
        outcome.refuse(usable[position], refused.reason)
    for position, skipped in batch.skipped:
        outcome.refuse(usable[position], skipped.note)
    most = context.native_settings.max_images
    for position in batch.not_tried:
        outcome.refuse(
            usable[position], f"at most {most} images are attached per result{context.ask_tool()}"
        )


def _string_caller(read: ReadResult, context: LaneContext) -> _Outcome:
    """The native lane for a caller that takes a string: no pixels can go, so none is fitted."""
    outcome = _Outcome("reference")
    for found in _usable(read, outcome):
        outcome.refuse(
            found, f"this caller takes text only, which cannot carry pixels{context.ask_tool()}"
        )
    return outcome


def _reference(read: ReadResult, context: LaneContext) -> _Outcome:
    outcome = _Outcome("reference")
    usable = _usable(read, outcome)
    if usable:
        outcome.notes.append(_kept_out_note(len(usable), context))
    return outcome


async def _describe(read: ReadResult, context: LaneContext) -> _Outcome:
    outcome = _Outcome("describe")
    usable = _usable(read, outcome)
    limit = context.native_settings.max_images
    for found in usable[:limit]:
        assert found.sniffed is not None  # usable images were sniffed and cached
        note = await context.describe(found.data, found.sniffed, found.path)
        outcome.descriptions.append(note)
        outcome.described.append(
            {"index": found.index, "ok": note.ok, "backend": note.backend, "reason": note.reason}
        )
    if usable[limit:]:
        outcome.notes.append(_kept_out_note(len(usable) - limit, context))
    return outcome


def _kept_out_note(count: int, context: LaneContext) -> str:
    return (
        f"[{count} image(s) kept out of the conversation (text lane)"
        f"{context.ask_tool('what one shows')}]"
    )


def _compose(
    read: ReadResult,
    outcome: _Outcome,
    clean: ToolResult,
    described: list[str],
    copies: Copies,
    declared: bool,
) -> str:
    lines = [*described, *read.lines]
    if read.hidden_texts:
        lines.append(hidden_note(read.hidden_texts, read.user_only))
    lines += outcome.notes
    lines += clean.dropped
    structured = clean.structured_content
    if structured is not None and not declared and not _text_carries(clean, structured):
        lines.append(json_line("structured content", copies.structured_text))
    if copies.meta:
        lines.append(json_line("_meta", copies.meta))
    return "\n".join(lines)


def _text_carries(result: ToolResult, structured: Any) -> bool:
    """True when a text block is the structured content serialized (the spec's advice)."""
    for block in result.content:
        if isinstance(block, TextBlock) and block.text.lstrip().startswith(("{", "[")):
            try:
                if json.loads(block.text) == structured:
                    return True
            except ValueError:
                # Text that merely starts like JSON: not the serialized structured content.
                continue
    return False


def _execution(
    read: ReadResult, outcome: _Outcome, is_error: bool, tool_name: str | None
) -> dict[str, Any]:
    user_paths = [f.path for f in read.images if not f.for_model and f.path is not None]
    return {
        "action": outcome.action,
        "tool_name": tool_name,
        "is_error": is_error,
        "images_found": len(read.images),
        "attached": outcome.attached,
        "refused": outcome.refused,
        "described": outcome.described,
        "bytes_before": sum(len(found.data) for found in read.images),
        "bytes_after": sum(len(image.data) for image in outcome.images),
        "media_paths": list(_model_paths(read)),
        "user_media_paths": user_paths,
        "hidden_text_blocks": read.hidden_texts,
    }
