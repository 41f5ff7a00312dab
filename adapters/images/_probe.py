"""Predict an image's encoded size from encodes of a small sample of it.

The sample is a mosaic of GRID x GRID tiles spread evenly over the image, each resampled from
the source at the size being considered, so no size needs a full resize until it is chosen.
Encoded bytes scale with pixel area: the mosaic's bytes times the area ratio predict the full
encode (within about ±10% on the bench corpus). Small images are their own sample: their
predictions are exact and the probe's bytes are reused as the final encode.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Final

from PIL import Image

from ._detail import similarity
from ._encode import WEBP, Codec, encode, prepare
from ._source import SourceImage

TILE: Final = 32
"""Side of a mosaic tile: a multiple of WebP's 16 px macroblock and of JPEG's MCU."""
GRID: Final = 10
"""Tiles per row and column (a 320x320 sample). An 8x8 grid makes WebP probes a third cheaper
but is less representative: it flipped the JPEG-or-WebP choice on `retina` below the ladder."""
FULL_PROBE_PIXELS: Final = 3 * (GRID * TILE) ** 2
"""Images this small are probed with full encodes, which then need no final encode."""
PHOTO_ELASTICITY: Final = 2.5
"""Sample bytes at WebP q95 over q40 at or above which content counts as photographic.

Text and UI cost bits at their edges whatever the quality (1.8-2.2 on the bench screenshots);
photo texture and noise grow with quality (2.8-6.2 on the bench photos).
"""
_ELASTICITY_QUALITIES: Final = (95, 40)
# Container and table bytes that do not scale with area (JPEG: quantisation and Huffman tables).
_HEADER_BYTES: Final = {"image/jpeg": 600, "image/webp": 40, "image/png": 60, "image/gif": 800}


class Probe:
    """Size predictions for one image at one size, calibrated by any full encode of it."""

    def __init__(self, source: SourceImage, size: tuple[int, int]) -> None:
        self.size = size
        width, height = size
        self.exact = width * height <= FULL_PROBE_PIXELS or min(width, height) < 4 * TILE
        self._source = source
        self._full: Image.Image | None = source.at(size) if self.exact else None
        self.sample = self._full if self._full is not None else source.tiles(size, TILE, GRID)
        self._factor = width * height / (self.sample.width * self.sample.height)
        self.encodes = 0
        self.probes = 0
        self._prepared: dict[tuple[Codec, bool], Image.Image] = {}
        self._encoded: dict[tuple[Codec, int | None], bytes] = {}
        self._calibration: dict[Codec, float] = {}
        self._similarity: dict[tuple[Codec, int | None], float] = {}

    def predict(self, codec: Codec, quality: int | None) -> float:
        """Predicted bytes of the full image encoded with `codec` at `quality`."""
        size = len(self._sample_bytes(codec, quality))
        if self.exact:
            return float(size)
        header = _HEADER_BYTES[codec.media_type]
        scaled = max(size - header, 1) * self._factor * self._calibration.get(codec, 1.0)
        return scaled + header

    def full_encode(self, codec: Codec, quality: int | None) -> bytes:
        """The full image encoded; the probe's own bytes when the sample is the image."""
        if self.exact:
            return self._sample_bytes(codec, quality)
        self.encodes += 1
        return encode(self._prepared_image(codec, full=True), codec, quality)

    def calibrate(self, codec: Codec, quality: int | None, actual: int) -> None:
        """Scale later predictions for `codec` by how far the one for `quality` missed."""
        predicted = self.predict(codec, quality)
        self._calibration[codec] = self._calibration.get(codec, 1.0) * actual / predicted

    def similarity(self, codec: Codec, quality: int | None) -> float:
        """Windowed SSIM of the sample encoded with `codec` at `quality` against the sample."""
        key = (codec, quality)
        if key not in self._similarity:
            decoded = Image.open(io.BytesIO(self._sample_bytes(codec, quality)))
            decoded.load()
            self._similarity[key] = similarity(self.sample, decoded)
        return self._similarity[key]

    def photographic(self) -> bool:
        """Whether bytes grow with quality as a photo's do, rather than as text's and UI's."""
        top, bottom = (len(self._sample_bytes(WEBP, q)) for q in _ELASTICITY_QUALITIES)
        return top >= PHOTO_ELASTICITY * bottom

    def _sample_bytes(self, codec: Codec, quality: int | None) -> bytes:
        key = (codec, quality)
        if key not in self._encoded:
            if self.exact:
                self.encodes += 1
            else:
                self.probes += 1
            self._encoded[key] = encode(self._prepared_image(codec, full=False), codec, quality)
        return self._encoded[key]

    def _prepared_image(self, codec: Codec, *, full: bool) -> Image.Image:
        # JPEG's two codecs share one prepared image (flattened); the palette is its own.
        shared = dataclasses.replace(codec, subsampling=None, lossy=False)
        key = (shared, full or self.exact)
        if key not in self._prepared:
            self._prepared[key] = prepare(self._whole() if key[1] else self.sample, codec)
        return self._prepared[key]

    def _whole(self) -> Image.Image:
        if self._full is None:
            self._full = self._source.at(self.size)
        return self._full
