"""Choose codec, quality and size so an image keeps the most detail within a byte budget.

Encoded sizes are predicted from encodes of a small mosaic of tiles spread over the image
(bytes scale with pixel area), so a typical image costs one full-size encode; a miss
calibrates the prediction and retries. Quality drops to a floor before any pixels are given
up, then the image shrinks by the factor the budget needs.

Which codec to use was measured (bench/bench_images.py, SSIM and time):
- JPEG 4:4:4 at q95 when that fits: near-lossless, and cheap to encode;
- text and UI: JPEG 4:2:0 down to q50, then WebP. WebP keeps more detail per byte (SSIM ~0.96
  vs ~0.93 at 1568x882) but its encode alone (28 ms) costs more than the naive ladder's whole
  margin over a decode and a resize, so it is kept for what JPEG cannot fit at full size;
- photos: WebP, unless JPEG 4:4:4 also fits at q80+ and a windowed SSIM on the sample says it
  keeps more (smooth photos, where WebP tops out near SSIM 0.98 with bytes to spare); that is
  decided on the sample, so only the winner is encoded in full.
Text stays legible down to WebP q40 / JPEG q50 at full size, and SSIM prefers that to
shrinking, so those are the floors for text and UI. Photo texture is the other way round:
below WebP q90 it smooths away, and a slightly smaller image at higher quality keeps more.

Those floors are for detail; legibility comes first. When none of them fits at a size, the
size is kept at a lower quality, down to where labels still read (`fit_legible`, measured by
OCR in bench/bench_legibility.py), and only then are pixels given up: a busy page of photos,
noise or map texture shrunk to keep WebP q90 had lost its text (657x370, 1% of the labels).

The plan and the measured floors are here (`_plan`), the search at one size in `_at_size`,
the shrinking in `_fit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from .._encode import GIF, MAX_EDGES, PNG, Codec
from .._types import ImageTarget, Refusal

TOP_QUALITY: Final = 95
"""Highest quality used: above it JPEG bytes climb steeply for no visible gain."""
WEBP_TEXT_FLOOR: Final = 40
WEBP_PHOTO_FLOOR: Final = 90
JPEG_TEXT_FLOOR: Final = 50
JPEG_PHOTO_FLOOR: Final = 70
JPEG_444_FLOOR: Final = 80
JPEG_CRISP_TEXT: Final = 80
"""Below this JPEG quality small text blurs where WebP, when accepted, keeps it: a 2x
spreadsheet at 1568x980 read 91.5% as JPEG 4:2:0 q69 (236 KB of base64) and 93.9% as WebP
q70 (123 KB); the halving ladder's JPEG q85 at 1440x900 read 93% (bench_legibility.py)."""
JPEG_LEGIBLE_FLOOR: Final = 25
WEBP_LEGIBLE_FLOOR: Final = 25
"""The legibility floors: the lowest qualities at which labels still read (bench_legibility.py:
white 11-16 CSS px text over noise at 1568x882 reads 97% as JPEG 4:2:0 q25 and 98% at q35,
but 87% at q25 once shrunk to 1280x720). Tried at a size before any pixels are given up."""
FIRST_GOAL: Final = 0.92
"""Share of the budget a predicted size may use before the first full encode (mosaic ±10%)."""
RETRY_GOAL: Final = 0.97
"""Share used once a full encode has calibrated the prediction."""
FULL_ENCODES_PER_CODEC: Final = 3
SEARCH_STEPS: Final = 2
"""Interpolation probes per WebP search (a WebP probe costs ~2.5 ms, a seventh of a full encode)."""
JPEG_SEARCH_STEPS: Final = 5
"""JPEG probes cost ~0.4 ms, so JPEG searches run to QUALITY_TOLERANCE (text gains 5-10 quality
steps over two probes at 1568x882, +0.01 SSIM)."""
QUALITY_TOLERANCE: Final = 3
"""Stop refining once the bracket is this narrow: a few quality steps move SSIM < 0.002."""
TEXT_AREA_EXPONENT: Final = 0.9
"""Bytes ~ area**exponent when shrinking, as measured: 0.9-1.0 for text, 0.7-0.8 for photos
(detail per pixel rises as they shrink) and 0.6-0.9 for PNG. After two sizes the exponent is
measured from them instead."""
PHOTO_AREA_EXPONENT: Final = 0.8
LOSSLESS_AREA_EXPONENT: Final = 0.7
PALETTE_SIMILARITY: Final = 0.95
"""Windowed SSIM of the sample in eight colours from which dense text goes as a palette PNG:
0.978 for a page of body text, 0.81-0.88 for the bench's screenshots of UI and photos."""
MAX_SHRINK_STEP: Final = 0.92
"""Each shrink takes at least 8% off the long edge, so the loop always ends."""
MIN_LONG_EDGE: Final = 16
MAX_SHRINKS: Final = 10
_LOSSLESS_SOURCES: Final = frozenset({"image/png", "image/gif"})
_UNCOMPRESSED_SOURCES: Final = frozenset({"image/bmp", "image/tiff"})


@dataclass(frozen=True)
class Encoded:
    """The chosen encoding of an image."""

    data: bytes = field(repr=False)
    media_type: str
    width: int
    height: int
    quality: int | None
    encodes: int
    probes: int


@dataclass(frozen=True)
class FitPlan:
    """What may be written for one image: raw byte limit, formats, and whether PNG goes first."""

    limit: int
    budget_base64: int
    formats: frozenset[str]
    lossless: Codec | None
    lossless_first: bool
    source_bytes: int | None = None
    """The source's own size when it was already in an accepted format: the first size is
    tried within it before the rest of the budget is used (never more bytes for fewer pixels)."""

    @property
    def lossy(self) -> bool:
        """Whether JPEG or WebP may be written."""
        return bool(self.formats & {"image/jpeg", "image/webp"})


def plan(
    target: ImageTarget,
    source: str,
    source_bytes: int,
    source_pixels: int,
    size: tuple[int, int],
) -> FitPlan:
    """The plan for one image; PNG goes first only when a lossless source suggests it fits."""
    formats = frozenset(f for f in target.formats if max(size) <= MAX_EDGES[f])
    if not formats:
        raise Refusal(f"refused: {size[0]}x{size[1]} is too large for the accepted formats")
    output_pixels = size[0] * size[1]
    lossless = PNG if "image/png" in formats else GIF if "image/gif" in formats else None
    limit = target.budget_bytes
    has_lossy = bool(formats & {"image/jpeg", "image/webp"})
    png_first = lossless is PNG and _png_may_fit(
        source, source_bytes, source_pixels, output_pixels, limit
    )
    first = lossless is not None and (png_first or not has_lossy)
    return FitPlan(limit, target.budget_base64, formats, lossless, first)


def _png_may_fit(
    source: str, source_bytes: int, source_pixels: int, output_pixels: int, limit: int
) -> bool:
    if source in _UNCOMPRESSED_SOURCES:
        return True
    # Resampling adds colours, so the source's bytes per pixel is an optimistic floor.
    return source in _LOSSLESS_SOURCES and source_bytes * output_pixels <= limit * source_pixels
