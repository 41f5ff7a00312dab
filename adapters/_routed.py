"""The routed result: what one adapter hands on, whatever the source and the provider.

An adapter turns a source's raw output plus the gate's decision into one `RoutedResult`; the
payload stage (`_payloads.py`) renders it for a provider API without deciding anything again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from visiongate.engine.facts import ProviderRoute

from .images import ProcessedImage
from .sanitize._media import UNVERIFIED, mark_unverified_media
from .vision import DescriptionNote

__all__ = [
    "MEDIA_PREFIX",
    "UNVERIFIED",
    "RoutedResult",
    "json_line",
    "mark_unverified_media",
    "media_line",
    "refuse_attached",
]

MEDIA_PREFIX: Final = "MEDIA:"
"""The start of a line naming a file this router wrote; agents' surfaces attach such files."""

# JSON leaves these raw inside strings, and `str.splitlines()` breaks lines on them.
_RAW_LINE_BREAKS: Final = re.compile("[\x7f-\x9f\u2028\u2029]")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


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
    """Sanitized; also written into `text` when the tool's text did not already carry it."""
    meta: Mapping[str, Any] | None = None
    """The sanitized, model-facing `_meta` (protocol-reserved keys dropped); in `text` too."""
    is_error: bool = False
    media_paths: tuple[str, ...] = ()
    """Files this call wrote (or, for browser screenshots, the path the tool gave)."""
    tool_name: str | None = None
    record: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    api: str | None = None
    """The payload shape the images were fitted and guarded for (None: the route's own)."""

    @property
    def description(self) -> DescriptionNote | None:
        """The first description, for sources that have one image."""
        return self.descriptions[0] if self.descriptions else None

    @property
    def native(self) -> bool:
        return self.lane == "native"

    def to_mcp(self) -> dict[str, Any]:
        """The routed result as an MCP `CallToolResult` on the wire (camelCase JSON): one text
        block with `text`, then an image block per attached image (native lane only).

        For frameworks that take MCP results and render them themselves (openai-agents,
        an MCP proxy): `CallToolResult.model_validate(routed.to_mcp())` with either SDK
        generation. Structured content is left out on purpose: it is already a JSON line in
        the text, and some frameworks send only the structured content when it is present,
        dropping the images."""
        content: list[dict[str, Any]] = [{"type": "text", "text": self.text}]
        content += [
            {"type": "image", "data": image.base64, "mimeType": image.media_type}
            for image in self.images
        ]
        return {"content": content, "isError": self.is_error}


def media_line(path: str) -> str:
    return f"{MEDIA_PREFIX}{path}"


def json_line(label: str, value: Any) -> str:
    """`label: <compact JSON>` on one line under any line-splitting rule; non-JSON values are
    shown with `repr` so nothing is lost.

    The server's strings cannot start a line of their own (a `MEDIA:` line, say): JSON escapes
    the C0 controls, and the C1 controls, U+2028 and U+2029 are escaped here.
    """
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return f"{label}: {_RAW_LINE_BREAKS.sub(_escaped, text)}"


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


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
