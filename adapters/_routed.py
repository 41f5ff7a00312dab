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

from visiongate.engine.facts._registry import ProviderRoute

from .images import ProcessedImage
from .vision import DescriptionNote

__all__ = [
    "MEDIA_PREFIX",
    "UNVERIFIED",
    "RoutedResult",
    "json_line",
    "mark_unverified_media",
    "media_line",
]

MEDIA_PREFIX: Final = "MEDIA:"
"""The start of a line naming a file this router wrote; agents' surfaces attach such files."""

UNVERIFIED: Final = "[unverified] "
_MEDIA_LINE: Final = re.compile(r"^([ \t]*)(?=media:)", re.IGNORECASE | re.MULTILINE)
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


def media_line(path: str) -> str:
    return f"{MEDIA_PREFIX}{path}"


def json_line(label: str, value: Any) -> str:
    """`label: <compact JSON>`; non-JSON values are shown with `repr` so nothing is lost."""
    return f"{label}: {json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)}"


def mark_unverified_media(text: str) -> tuple[str, int]:
    """`text` with `[unverified] ` before every line that starts like a `MEDIA:` line.

    Only this router writes `MEDIA:` lines; one in a tool's own text could steer an agent
    surface that attaches such files into sending a file of the tool's choosing.
    """
    return _MEDIA_LINE.subn(rf"\1{UNVERIFIED}", text)
