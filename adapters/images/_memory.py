"""How much memory an image will take at its peak, from its header, and a budget to hold it in.

A worker pool bounds how many images are processed at once, not how much memory they take: a
64-megapixel image needs hundreds of MB, a screenshot a few. So each image also reserves its
peak memory, predicted from its header, from the worker's budget before it is decoded, and
gives it back when done: large images wait for each other while small ones keep flowing. An
image predicted to need more than the whole budget still runs, alone.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from PIL import Image

from ._decode import MAX_SOURCE_PIXELS, decodes_directly, fitted_size
from ._sniff import DECODABLE, sniff_media_type

DEFAULT_MEMORY_BUDGET: Final = 1 << 30
"""Bytes of predicted peak memory that one worker lets run at once (1 GiB)."""
PEAK_FACTOR: Final = 2.0
"""Peak over width x height x 4 bytes, the goal for every format but WebP: measured 1.5 at
most for PNG, GIF and the rest (bench/bench_image_memory.py)."""
WEBP_PEAK_FACTOR: Final = 4.5
"""An animated WebP (or any WebP when libwebp cannot be loaded) peaks at 4.0 inside Pillow's
decode alone: libwebp's animation decoder, the only one Pillow uses, keeps two canvases and
returns a third copy, which Pillow copies once more."""
WEBP_STILL_PEAK_FACTOR: Final = 2.3
"""A still WebP is decoded by libwebp's simple API straight into the frame: measured 2.27 at
most (lossy with a gradient alpha, whose plane libwebp decodes through a 4-byte buffer of its
own), 2.04 for a many-coloured lossless image, 1.30 for few colours."""
PROGRESSIVE_FACTOR: Final = 1.0
"""A progressive JPEG's coefficients stay in memory at full size, whatever the draft scale
(measured 0.9)."""
_FLOOR: Final = 1 << 20
_MIN_SHARE: Final = 4
"""The smallest per-image budget a share can give (ImageTarget's own minimum): an image that
cannot fit in it is refused with the stage's reason, never attached over the budget."""


def predicted_peak(data: bytes, max_edge: int) -> int:
    """Bytes the stage is predicted to need at its peak for `data`, from the header alone.

    Data whose header cannot be read will be refused right after decoding starts; it is
    predicted to need little.
    """
    media_type = sniff_media_type(data)
    if media_type not in DECODABLE:
        return _FLOOR
    try:
        with Image.open(io.BytesIO(data), formats=[DECODABLE[media_type]]) as image:
            full = min(image.width * image.height, MAX_SOURCE_PIXELS) * 4
            if image.format not in ("JPEG", "MPO"):
                return max(_FLOOR, int(full * _peak_factor(data, image)))
            progressive = bool(image.info.get("progressive") or image.info.get("progression"))
            image.draft(None, fitted_size(image.width, image.height, max_edge))
            drafted = min(image.width * image.height, MAX_SOURCE_PIXELS) * 4  # libjpeg's size
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
        return _FLOOR
    coefficients = full * PROGRESSIVE_FACTOR if progressive else 0
    return max(_FLOOR, int(drafted * PEAK_FACTOR + coefficients))


def _peak_factor(data: bytes, image: Image.Image) -> float:
    if image.format != "WEBP":
        return PEAK_FACTOR
    return WEBP_STILL_PEAK_FACTOR if decodes_directly(data, image) else WEBP_PEAK_FACTOR


class MemoryBudget:
    """Bytes that reservations may hold at once; callers wait until theirs fits."""

    def __init__(self, total: int) -> None:
        if total < 1:
            raise ValueError("a memory budget must be positive")
        self.total = total
        self._free = total
        self._changed = threading.Condition()

    @contextmanager
    def reserve(self, amount: int) -> Iterator[None]:
        """Hold `amount` bytes (at most the whole budget) for the duration of the block."""
        amount = max(0, min(amount, self.total))
        with self._changed:
            self._changed.wait_for(lambda: self._free >= amount)
            self._free -= amount
        try:
            yield
        finally:
            with self._changed:
                self._free += amount
                self._changed.notify_all()

    @property
    def reserved(self) -> int:
        """Bytes held right now."""
        with self._changed:
            return self.total - self._free
