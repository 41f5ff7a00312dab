"""The fit cache: what the stage made of an image, kept by (content hash, what it was fitted for).

Tools return the same image again and again (a screenshot of an unchanged screen, the same
chart on every call); fitting a 2560x1440 screenshot costs ~190 ms, a look-up microseconds.
The stage is a pure function of the bytes and the target (formats, budget, ceiling, tiling),
so a result is reused only for exactly those; a refusal for lack of memory, which says
nothing about the image, is never kept. Bounded by entries and by the bytes of the images it
holds (their base64 text included, which a result keeps once it has been rendered), least
recently used first out; safe to share between threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from ._tiles import TallSettings
from ._types import MEMORY_REFUSAL, ImageTarget, ProcessedImage, RefusedImage, TiledImage

DEFAULT_ENTRIES: Final = 256
DEFAULT_BYTES: Final = 64 << 20
"""64 MiB: some 160 fitted screenshots at the default budget, with their base64 text."""
_ENTRY_OVERHEAD: Final = 1024

Fitted = ProcessedImage | RefusedImage | TiledImage


@dataclass(frozen=True)
class FitKey:
    """What a result depends on: the bytes (by SHA-256) and everything they were fitted for."""

    sha256: str
    target: ImageTarget
    tall: TallSettings | None


class FitCache:
    """Results of the image stage, least recently used first out."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES, max_bytes: int = DEFAULT_BYTES) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a fit cache needs room for at least one entry and one byte")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[FitKey, tuple[Fitted, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: FitKey) -> Fitted | None:
        """The result kept for `key`, now the most recently used; None when there is none."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: FitKey, result: Fitted) -> None:
        """Keep `result` for `key`, dropping the least recently used past either bound; a
        result larger than the whole cache, or a refusal for lack of memory, is not kept."""
        if isinstance(result, RefusedImage) and result.reason == MEMORY_REFUSAL:
            return
        size = _size(result)
        if size > self.max_bytes:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._entries[key] = (result, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        """Forget every result."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """Bytes counted for what is kept now."""
        with self._lock:
            return self._bytes


def _size(result: Fitted) -> int:
    images = result.tiles if isinstance(result, TiledImage) else (result,)
    # The image bytes and the base64 text a rendered result keeps beside them (4/3 as many).
    return _ENTRY_OVERHEAD + sum(
        len(image.data) * 7 // 3 for image in images if isinstance(image, ProcessedImage)
    )
