"""Route computer-use and browser screenshots: one image, one decision, like every source.

Native lane: the screenshot fitted to the route, with its scale note so the model can map
coordinates back to the screen; a full-page capture too tall to be legible whole comes as
tiles, and what the tiles leave goes the text lane's way. Text lane (`describe`, the default
for both sources): the auxiliary backend's description, before the tool's own text and framed
with the image it describes; if that backend fails the model reads a clear "vision
unavailable" note and the pixels still stay out. Every screenshot keeps its path in the text
(`MEDIA:<path>`), written to the image cache (0600, content-addressed, as MCP images are) when
the tool gave none, so the model can always ask for the file, in both lanes. A computer-use
loop repeats unchanged screens often: those are one file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._cache import UNKNOWN_EXTENSION, extension_for
from .._routed import RoutedResult, mark_unverified_media, media_line
from ..images import BatchResult, ProcessedImage, sniff_media_type
from ..sanitize._sanitizer import Sanitizer
from ..vision import DescriptionNote
from ._lane import LaneContext, attached_summary, description_block, image_label

__all__ = ["SingleImage", "route_screenshot", "route_single"]

SCREENSHOT_SOURCES = ("computer_use", "browser")
_UNKNOWN_MEDIA_TYPE = "application/octet-stream"


@dataclass(frozen=True)
class SingleImage:
    """One image from a tool, with the tool's own text and, optionally, a question about it."""

    data: bytes
    label: str
    """How notes name it: `screenshot`, `image`."""
    text: str = ""
    path: str | None = None
    question: str | None = None


@dataclass
class _Outcome:
    action: str
    lines: list[str] = field(default_factory=list)
    images: list[ProcessedImage] = field(default_factory=list)
    descriptions: list[tuple[str, DescriptionNote]] = field(default_factory=list)
    """Each description with the name of what it describes (`the screenshot`, or a part)."""
    execution: dict[str, Any] = field(default_factory=dict)


async def route_screenshot(
    image: bytes, context: LaneContext, *, path: str | None = None, text: str = ""
) -> RoutedResult:
    """Route one computer-use or browser screenshot for the decision in `context`."""
    if context.source not in SCREENSHOT_SOURCES:
        raise ValueError(f"`{context.source}` is not a screenshot source")
    sniffed = sniff_media_type(image)
    if path is None and extension_for(sniffed) != UNKNOWN_EXTENSION:
        cached = await context.off_loop(True, context.cache.write, image, sniffed)
        path = str(cached.path)
    return await route_single(SingleImage(image, "screenshot", text, path), context)


async def route_single(item: SingleImage, context: LaneContext) -> RoutedResult:
    """Route one image (screenshot or vision_analyze input) for the decision in `context`."""
    sanitizer = context.sanitizer()
    outcome = await _carry_out(item, context)
    lines, unverified = _lines(item, outcome, sanitizer)
    paths = (item.path,) if item.path is not None else ()
    execution = {
        "action": outcome.action,
        "bytes_before": len(item.data),
        "bytes_after": sum(len(image.data) for image in outcome.images),
        "media_paths": list(paths),
        "unverified_media_lines": unverified,
        **outcome.execution,
    }
    return RoutedResult(
        source=context.source,
        lane=context.lane,
        text="\n".join(lines),
        route=context.route,
        images=tuple(outcome.images),
        descriptions=tuple(note for _, note in outcome.descriptions),
        media_paths=paths,
        tool_name=context.source,
        record=context.record(execution, sanitizer.counts()),
        api=context.payload_api,
    )


def _lines(item: SingleImage, outcome: _Outcome, sanitizer: Sanitizer) -> tuple[list[str], int]:
    """The text lines, and how many `MEDIA:` lines in the tool's or backend's text were marked."""
    own_text, unverified = mark_unverified_media(sanitizer.text(item.text, "text"))
    lines: list[str] = []
    for name, description in outcome.descriptions:
        block, count = description_block(name, item.path, description.text, sanitizer)
        lines += block
        unverified += count
    if own_text:
        lines.append(own_text)
    if item.path is not None:
        lines.append(media_line(item.path))
    lines += outcome.lines
    return lines, unverified


async def _carry_out(item: SingleImage, context: LaneContext) -> _Outcome:
    if context.lane == "native":
        return await _native(item, context)
    if context.text_action == "describe":
        return await _describe(item, context)
    return _reference(item, context)


async def _native(item: SingleImage, context: LaneContext) -> _Outcome:
    outcome = _Outcome("attach")
    batch = await context.attach([item.data])
    for image in batch.attached:
        outcome.images.append(image)
        outcome.lines.append(f"[{item.label} attached: {image_label(image)}; {image.scale_note}]")
    outcome.execution["attached"] = [
        attached_summary(1, image, len(item.data)) for image in batch.attached
    ]
    for _, part in batch.uncovered:
        notes, described = await context.uncovered(item.label, item.data, item.path, part)
        outcome.lines += notes
        outcome.descriptions += [(f"the {item.label}, {name}", note) for name, note in described]
        outcome.execution["described"] = [_said(note) for _, note in described]
    if not batch.attached and not batch.uncovered:
        reason = _first_reason(batch)
        outcome.lines.append(f"[{item.label} not attached: {reason}]")
        outcome.execution["refused"] = [{"index": 1, "reason": reason}]
    return outcome


def _said(note: DescriptionNote) -> dict[str, Any]:
    return {"index": 1, "ok": note.ok, "backend": note.backend, "reason": note.reason}


def _first_reason(batch: BatchResult) -> str:
    if batch.refused:
        return batch.refused[0][1].reason
    if batch.skipped:
        return batch.skipped[0][1].note
    return "the image stage did not try it"


async def _describe(item: SingleImage, context: LaneContext) -> _Outcome:
    outcome = _Outcome("describe")
    media_type = sniff_media_type(item.data) or _UNKNOWN_MEDIA_TYPE
    note = await context.describe(item.data, media_type, item.path, item.question)
    outcome.descriptions.append((f"the {item.label}", note))
    outcome.execution["described"] = [_said(note)]
    return outcome


def _reference(item: SingleImage, context: LaneContext) -> _Outcome:
    outcome = _Outcome("reference")
    ask = context.ask_tool("what it shows") if item.path else ""
    outcome.lines.append(f"[{item.label} kept out of the conversation (text lane){ask}]")
    return outcome
