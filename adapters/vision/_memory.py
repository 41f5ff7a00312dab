"""What the text lane remembers of recent screenshots, per source, to read the next one faster.

A computer-use or browser agent takes a screenshot every step, and consecutive screenshots
are mostly the same screen. `ScreenMemory` keeps the last few screenshots of each source
(their pixels and the text read in them) so the OCR backend can re-read only what changed.
One memory belongs to one router: sources never share an entry, and nothing is kept beyond
the bounds given.

No numpy at import time: a router holds a memory whether or not OCR is installed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from ._layout import TextBox, TextLine

if TYPE_CHECKING:
    from ._base import Description
    from ._engine import Pixels

MAX_STREAMS: Final = 8
"""Sources remembered per router; the least recently used is forgotten first."""


@dataclass(frozen=True)
class Screen:
    """One screenshot as the OCR backend read it."""

    pixels: Pixels
    """RGB pixels, read-only; the next screenshot is compared with these."""
    digest: str
    """SHA-256 of the encoded image bytes, for exact repeats."""
    boxes: tuple[TextBox, ...]
    """Every text box read, in image coordinates."""
    lines: tuple[TextLine, ...]
    """The boxes arranged in reading order, as the description lists them."""
    setup: tuple[float, ...]
    """The detection scale and engine settings the boxes were read with; a screenshot read
    with other settings is never reused."""

    @property
    def size(self) -> tuple[int, int]:
        height, width = self.pixels.shape[:2]
        return int(width), int(height)


class ScreenMemory:
    """The last few screenshots of each source; bounded and safe to share between threads.

    `max_streams` sources are remembered at most, each with up to the `keep` screenshots
    given when one is stored (newest first).
    """

    def __init__(self, max_streams: int = MAX_STREAMS) -> None:
        self.max_streams = max(1, max_streams)
        self._streams: OrderedDict[str, tuple[Screen, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def recent(self, stream: str) -> tuple[Screen, ...]:
        """The remembered screenshots of `stream`, newest first; empty when there are none."""
        with self._lock:
            screens = self._streams.get(stream, ())
            if screens:
                self._streams.move_to_end(stream)
            return screens

    def remember(self, stream: str, screen: Screen, keep: int) -> None:
        """Store `screen` as the newest of `stream`, keeping at most `keep` of them."""
        with self._lock:
            older = tuple(s for s in self._streams.get(stream, ()) if s.digest != screen.digest)
            self._streams[stream] = (screen, *older)[: max(1, keep)]
            self._streams.move_to_end(stream)
            while len(self._streams) > self.max_streams:
                self._streams.popitem(last=False)

    def forget(self, stream: str | None = None) -> None:
        """Drop what is remembered of `stream`, or of every source."""
        with self._lock:
            if stream is None:
                self._streams.clear()
            else:
                self._streams.pop(stream, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._streams)


@runtime_checkable
class ScreenBackend(Protocol):
    """A vision backend that reads a stream of screenshots better than one at a time."""

    @property
    def name(self) -> str: ...

    def describe_screen(
        self, image: bytes, media_type: str, *, memory: ScreenMemory, stream: str
    ) -> Description:
        """Describe one screenshot of `stream`, using and updating what `memory` keeps."""
        ...
