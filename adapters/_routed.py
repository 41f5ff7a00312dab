"""The routed result: what one adapter hands on, whatever the source and the provider.

An adapter turns a source's raw output plus the gate's decision into one `RoutedResult`; the
payload stage (`_payloads.py`) renders it for a provider API without deciding anything again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from .sanitize._media import UNVERIFIED, mark_unverified_media
from .wire._text import json_text

if TYPE_CHECKING:  # the proxy's relay reads `MEDIA_PREFIX` before any image or backend exists
    from visiongate.engine.facts import ProviderRoute

    from .images import ProcessedImage
    from .vision import DescriptionNote

__all__ = [
    "MEDIA_PREFIX",
    "UNVERIFIED",
    "ClientParts",
    "RoutedResult",
    "json_line",
    "mark_unverified_media",
    "media_line",
    "refuse_attached",
    "with_annotations",
]

MEDIA_PREFIX: Final = "MEDIA:"
"""The start of a line naming a file this router wrote; agents' surfaces attach such files."""

_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True)
class ClientParts:
    """What an MCP client gets besides the model's text and images (`RoutedResult.to_mcp`).

    The gate decides what the model reads; these are the parts that are not the model's: the
    annotations of the blocks the text and images came from, content annotated for the user
    only (passed with its annotations), audio (passed as it came), and whether the tool
    declares an output schema (then the client gets the routed `structuredContent`)."""

    text_annotations: Mapping[str, Any] | None = None
    """What the annotations of the text's parts say together (wire shape)."""
    image_annotations: tuple[Mapping[str, Any] | None, ...] = ()
    """Per attached image, the annotations of the block it came from."""
    passed: tuple[Mapping[str, Any], ...] = ()
    """Blocks the client gets as they came (wire shape): user-only content, audio."""
    structured_output: bool = False
    """The tool declares an output schema: `to_mcp` carries `structuredContent`, and the text
    has no `structured content:` line."""
    schema_problem: str | None = None
    """Why the routed structured content does not satisfy the schema it was checked against."""


@dataclass(frozen=True)
class RoutedResult:
    """One tool result after the gate's lane was carried out.

    `text` is everything the model reads: the tool's text, a `MEDIA:` line per image written to
    the cache, notes on what was attached or kept out, descriptions (text lane), and the
    sanitized structured content and vendor `_meta` as JSON lines. `images` is empty unless
    the lane is native. `record` is the decision record with the execution details added.
    """

    source: str
    lane: str
    text: str
    route: ProviderRoute
    """The provider route the gate resolved: its payload shape and limits."""
    images: tuple[ProcessedImage, ...] = ()
    descriptions: tuple[DescriptionNote, ...] = ()
    structured_content: Any = None
    """The routed copy: sanitized, the server's `MEDIA:` lines marked, each image as its
    `MEDIA:` path (or why it was refused), never base64, whatever the lane. Goes to the
    client (`to_mcp`) when the tool declares an output schema; otherwise it is written into
    `text` (images as paths) when the tool's text did not already carry it."""
    meta: Mapping[str, Any] | None = None
    """The sanitized, model-facing `_meta` (protocol-reserved keys dropped), its images as
    their `MEDIA:` paths; in `text` too."""
    is_error: bool = False
    media_paths: tuple[str, ...] = ()
    """Files this call wrote (or, for browser screenshots, the path the tool gave)."""
    tool_name: str | None = None
    record: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    api: str | None = None
    """The payload shape the images were fitted and guarded for (None: the route's own)."""
    client: ClientParts = field(default_factory=ClientParts)
    """What the MCP client gets besides the model's text and images."""
    server_lines: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """The lines of the tool's own (sanitized) text: a cut to the client's limit never keeps
    one of them for a note of the proxy's, whatever it starts with."""
    sink: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False, repr=False)
    """The trace sink `record` was written to (None: not written, `trace=False`): rendering
    that withholds more images writes the amended record there too."""

    @property
    def description(self) -> DescriptionNote | None:
        """The first description, for sources that have one image."""
        return self.descriptions[0] if self.descriptions else None

    @property
    def native(self) -> bool:
        return self.lane == "native"

    def to_mcp(self) -> dict[str, Any]:
        """The routed result as an MCP `CallToolResult` on the wire (camelCase JSON): one text
        block with `text`, an image block per attached image (native lane only), then the
        blocks that pass as they came (`client.passed`), each with its annotations.

        For frameworks that take MCP results and render them themselves (openai-agents,
        an MCP proxy): `CallToolResult.model_validate(routed.to_mcp())` with either SDK
        generation. The routed structured content is there when the tool declares an output
        schema (clients require it then); otherwise it is left out on purpose: it is already
        a JSON line in the text, and some frameworks send only the structured content when it
        is present, dropping the images."""
        text: dict[str, Any] = {"type": "text", "text": self.text}
        content: list[dict[str, Any]] = [with_annotations(text, self.client.text_annotations)]
        notes = self.client.image_annotations
        for position, image in enumerate(self.images):
            block = {"type": "image", "data": image.base64, "mimeType": image.media_type}
            content.append(
                with_annotations(block, notes[position] if position < len(notes) else None)
            )
        content += [dict(block) for block in self.client.passed]
        wire: dict[str, Any] = {"content": content, "isError": self.is_error}
        if self.client.structured_output and self.structured_content is not None:
            wire["structuredContent"] = self.structured_content
        return wire


def with_annotations(
    block: dict[str, Any], annotations: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A wire block with `annotations` (wire shape) set, when there are any."""
    return {**block, "annotations": dict(annotations)} if annotations else block


def media_line(path: str) -> str:
    return f"{MEDIA_PREFIX}{path}"


def ask_tool(image_tool: str | None, what: str = "it") -> str:
    """The end of a note on an image kept out: how the model can see `what`, if it has a tool
    for it (the agent's `vision_analyze`, the proxy's `visiongate_view_image`); "" if not."""
    if image_tool is None:
        return ""
    return f"; to see {what}, call {image_tool} with its MEDIA: path"


def json_line(label: str, value: Any) -> str:
    """`label: <compact JSON>` on one line under any line-splitting rule; non-JSON values are
    shown with `repr` so nothing is lost.

    The server's strings cannot start a line of their own (a `MEDIA:` line, say): JSON escapes
    the C0 controls, and the C1 controls, U+2028 and U+2029 are escaped here.
    """
    return f"{label}: {json_text(value)}"


def refuse_attached(execution: Mapping[str, Any], reasons: Mapping[int, str]) -> dict[str, Any]:
    """A record's `execution` once some attached images were not sent after all: the entries
    of `attached` at the positions in `reasons` (0-based) move to `refused`, with the reason,
    so the record never claims pixels the payload does not carry."""
    attached = list(execution.get("attached") or [])
    moved = [
        {"index": entry.get("index"), "reason": reasons[i]}
        for i, entry in enumerate(attached)
        if i in reasons
    ]
    return {
        **execution,
        "attached": [entry for i, entry in enumerate(attached) if i not in reasons],
        "refused": [*(execution.get("refused") or []), *moved],
    }
