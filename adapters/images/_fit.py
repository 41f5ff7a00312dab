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
size is kept at a lower quality, down to where labels still read (`_fit_legible`, measured by
OCR in bench/bench_legibility.py), and only then are pixels given up: a busy page of photos,
noise or map texture shrunk to keep WebP q90 had lost its text (657x370, 1% of the labels).
The one exception is text a 2x capture's downscale has thinned, which JPEG blurs below its
crisp quality: one shrink step at a higher quality reads more (`_sharper_smaller`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Final

from ._decode import fitted_size
from ._encode import GIF, JPEG_420, JPEG_444, MAX_EDGES, PNG, PNG_PALETTE, WEBP, Codec
from ._probe import Probe
from ._source import SourceImage
from ._types import ImageTarget, Refusal

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
THIN_TEXT_QUALITY_GAIN: Final = 5
"""Quality steps a size one shrink smaller must gain for thin text that JPEG cannot keep
crisp: a 2x spreadsheet read 91.7% at 1568x980 as JPEG q73 and 96.3% at 1442x901 as q78
(the halving ladder's 1440x900 q85: 93.3%), bench_legibility.py."""
HIGH_DENSITY_SCALE: Final = 0.65
"""A capture fitted to at most this share of its size was taken at 2x or more (a 2x capture
of a 1280 CSS px screen fits at 0.61, a 1x 1920x1080 one at 0.82): only there is text shrunk
for sharpness, and never below half the source's size (one device pixel per CSS pixel at 2x).
At 1x text a step smaller reads less (1440x900 at 1:1: 99.8% as JPEG q73, 98.8% at 1325x828
as q83)."""
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


def fit(source: SourceImage, size: tuple[int, int], fit_plan: FitPlan) -> Encoded:
    """The most detailed encoding of `source` at `size` or smaller; `Refusal` if none fits."""
    probes: list[Probe] = []
    misses: list[tuple[int, float]] = []
    kind = _Kind()
    for _ in range(MAX_SHRINKS + 1):
        probe = Probe(source, size)
        probes.append(probe)
        within = _fit_within_source(probe, fit_plan, kind) if len(probes) == 1 else None
        attempt = _Attempt(probe, fit_plan, kind)
        outcome = within if within is not None else _fit_at_size(attempt)
        if not isinstance(outcome, _Choice) and fit_plan.lossy:
            outcome = _fit_legible(attempt)
        if isinstance(outcome, _Choice):
            if len(probes) == 1 and _thin_text(outcome, source, size, kind):
                outcome, size = _sharper_smaller(source, size, fit_plan, kind, outcome, probes)
            return Encoded(
                outcome.data,
                outcome.codec.media_type,
                size[0],
                size[1],
                outcome.quality,
                encodes=sum(p.encodes for p in probes),
                probes=sum(p.probes for p in probes),
            )
        misses.append((size[0] * size[1], outcome))
        size = _shrink(source, size, misses, _exponent(misses, fit_plan, kind), fit_plan)
    raise _cannot_fit(size, fit_plan)


def _thin_text(choice: _Choice, source: SourceImage, size: tuple[int, int], kind: _Kind) -> bool:
    """Text of a high-density capture, thinned by the downscale, that JPEG blurs at this
    size's quality (`HIGH_DENSITY_SCALE`)."""
    scale = max(size) / max(source.width, source.height)
    return (
        choice.codec is JPEG_420
        and choice.quality is not None
        and choice.quality < JPEG_CRISP_TEXT
        and kind.photographic is False
        and scale * MAX_SHRINK_STEP >= 0.5
        and scale <= HIGH_DENSITY_SCALE
    )


def _sharper_smaller(
    source: SourceImage,
    size: tuple[int, int],
    fit_plan: FitPlan,
    kind: _Kind,
    choice: _Choice,
    probes: list[Probe],
) -> tuple[_Choice, tuple[int, int]]:
    """One shrink step smaller at a JPEG quality `THIN_TEXT_QUALITY_GAIN` higher, when that
    fits; else the choice as it was. Text that a downscale already thinned reads better a
    little smaller and sharper than at the full size and blurred."""
    assert choice.quality is not None
    smaller = fitted_size(source.width, source.height, int(max(size) * MAX_SHRINK_STEP))
    probe = Probe(source, smaller)
    probes.append(probe)
    lowest = choice.quality + THIN_TEXT_QUALITY_GAIN
    sharper = _fit_lossy(_Attempt(probe, fit_plan, kind), JPEG_420, lowest, TOP_QUALITY - 1)
    return (sharper, smaller) if isinstance(sharper, _Choice) else (choice, size)


def _fit_within_source(probe: Probe, fit_plan: FitPlan, kind: _Kind) -> _Choice | None:
    """An encoding at this size in no more bytes than the source had, at or above the quality
    floors; None when there is none (or the source is larger than the budget anyway)."""
    cap = fit_plan.source_bytes
    if cap is None or cap >= fit_plan.limit:
        return None
    capped = _fit_at_size(_Attempt(probe, dataclasses.replace(fit_plan, limit=cap), kind))
    return capped if isinstance(capped, _Choice) else None


def _exponent(misses: list[tuple[int, float]], fit_plan: FitPlan, kind: _Kind) -> float:
    """How bytes scale with area: measured from the last two sizes, else the kind's typical."""
    if len(misses) >= 2:
        (area_before, before), (area, now) = misses[-2], misses[-1]
        if area < area_before and 0 < now < before and not math.isinf(before):
            measured = math.log(before / now) / math.log(area_before / area)
            return min(1.2, max(0.5, measured))
    if not fit_plan.lossy:
        return LOSSLESS_AREA_EXPONENT
    return PHOTO_AREA_EXPONENT if kind.photographic else TEXT_AREA_EXPONENT


@dataclass(frozen=True)
class _Choice:
    codec: Codec
    quality: int | None
    data: bytes = field(repr=False)


class _Kind:
    """Whether the content is photographic: measured at the first size, kept while shrinking."""

    def __init__(self) -> None:
        self.photographic: bool | None = None


@dataclass(frozen=True)
class _Attempt:
    """One size being tried."""

    probe: Probe
    plan: FitPlan
    kind: _Kind

    def photographic(self) -> bool:
        if self.kind.photographic is None:
            self.kind.photographic = self.probe.photographic()
        return self.kind.photographic

    def goal(self) -> float:
        """Bytes a prediction may reach: the whole budget once predictions are exact."""
        return self.plan.limit * (1.0 if self.probe.exact else FIRST_GOAL)


def _fit_at_size(attempt: _Attempt) -> _Choice | float:
    """An encoding at this size, or how far (predicted bytes / goal) the last codec misses."""
    lossless = attempt.plan.lossless
    if lossless is not None and attempt.plan.lossless_first:
        outcome = _fit_lossless(attempt, lossless)
        if isinstance(outcome, _Choice) or not attempt.plan.lossy:
            return outcome
    return _fit_lossy_at_size(attempt)


def _fit_lossy_at_size(attempt: _Attempt) -> _Choice | float:
    formats = attempt.plan.formats
    jpeg, webp = "image/jpeg" in formats, "image/webp" in formats
    if jpeg and isinstance(top := _fit_lossy(attempt, JPEG_444, TOP_QUALITY, TOP_QUALITY), _Choice):
        return top
    if not webp:
        return _fit_jpeg_only(attempt)
    if not attempt.photographic():
        return _fit_text(attempt, jpeg=jpeg)
    if jpeg and isinstance(smooth := _jpeg_if_better(attempt, WEBP_PHOTO_FLOOR), _Choice):
        return smooth
    return _fit_lossy(attempt, WEBP, WEBP_PHOTO_FLOOR, TOP_QUALITY)


def _fit_text(attempt: _Attempt, *, jpeg: bool) -> _Choice | float:
    """JPEG 4:2:0 where it keeps text crisp (`JPEG_CRISP_TEXT`), then WebP, then JPEG down to
    its text floor, before any pixels are given up.

    WebP keeps more detail per byte on text, but its encode costs 8x JPEG's (28 vs 3.5 ms at
    1568x882), more than the decode and resize of a 2560x1440 screenshot together, so JPEG
    goes first while it keeps small text crisp. Below that WebP keeps more of it per byte,
    and JPEG's lower qualities are for routes without WebP or where WebP misses too.
    """
    if jpeg:
        crisp = _fit_lossy(attempt, JPEG_420, JPEG_CRISP_TEXT, TOP_QUALITY - 1)
        if isinstance(crisp, _Choice):
            return crisp
    webp = _fit_lossy(attempt, WEBP, WEBP_TEXT_FLOOR, TOP_QUALITY)
    if isinstance(webp, _Choice):
        return webp
    if jpeg:
        chosen = _fit_lossy(attempt, JPEG_420, JPEG_TEXT_FLOOR, JPEG_CRISP_TEXT - 1)
        if isinstance(chosen, _Choice):
            return chosen
    return _fit_palette(attempt, webp)


def _fit_legible(attempt: _Attempt) -> _Choice | float:
    """The size kept at a lower quality, down to where text still reads, once the detail-first
    floors do not fit: a busy page (photos, noise, a textured map) shrunk to fit WebP q90
    went out at 657x370 and OCR read 1% of its labels; at 1568x882 as JPEG q35 it reads 98%.

    JPEG 4:2:0 first: at these qualities it is smaller than WebP on noise and texture (184 KB
    against 237 KB at q25) and its encode is cheaper; WebP where it is not accepted or JPEG
    misses.
    """
    formats = attempt.plan.formats
    shortfall = math.inf
    if "image/jpeg" in formats:
        jpeg = _fit_lossy(attempt, JPEG_420, JPEG_LEGIBLE_FLOOR, TOP_QUALITY - 1)
        if isinstance(jpeg, _Choice):
            return jpeg
        shortfall = jpeg
    if "image/webp" in formats:
        webp = _fit_lossy(attempt, WEBP, WEBP_LEGIBLE_FLOOR, TOP_QUALITY)
        if isinstance(webp, _Choice):
            return webp
        shortfall = min(shortfall, webp)
    return shortfall


def _fit_palette(attempt: _Attempt, shortfall: float) -> _Choice | float:
    """Dense text that no lossy floor fits, in a few colours before any pixel is given up.

    A page of 16 px body text at 1152x1568 took 197 KB as WebP q40 and 96 KB as an 8-colour
    PNG; local OCR read 83% of its words from the WebP, 94% from the PNG (93.5% from the
    pixels themselves), 69% once shrunk to fit the budget as WebP (bench_images.py --pages).
    Only where eight colours keep the sample's structure (`PALETTE_SIMILARITY`): text, never
    a screenshot of photos and gradients. SSIM prefers WebP q40 even on the page (0.993 to
    0.978 on its sample): it weighs smooth areas the way it weighs letters.
    """
    probe = attempt.probe
    if (
        "image/png" not in attempt.plan.formats
        or probe.sample.mode in ("LA", "RGBA")  # a palette PNG here is flattened
        or probe.similarity(PNG_PALETTE, None) < PALETTE_SIMILARITY
    ):
        return shortfall
    chosen = _fit_lossless(attempt, PNG_PALETTE)
    return chosen if isinstance(chosen, _Choice) else min(shortfall, chosen)


def _jpeg_if_better(attempt: _Attempt, webp_floor: int) -> _Choice | None:
    """JPEG 4:4:4 where it fits at q80+ and keeps more detail on the sample than WebP would.

    That happens on smooth photos, where WebP tops out near SSIM 0.98 with bytes to spare.
    Decided on the sample, before any full encode. WebP at TOP_QUALITY (already encoded to
    tell photos from text) bounds what any WebP quality keeps, so when JPEG beats that, the
    WebP search is skipped: it cost two WebP probes (~5 ms) on every photo JPEG won.
    """
    probe, goal = attempt.probe, attempt.goal()
    if probe.predict(JPEG_444, JPEG_444_FLOOR) > goal:
        return None  # the usual case for screenshots: one cheap probe settles it
    jpeg_quality = _search(probe, JPEG_444, JPEG_444_FLOOR, TOP_QUALITY - 1, goal)
    if jpeg_quality is None:
        return None
    jpeg_detail = probe.similarity(JPEG_444, jpeg_quality)
    if jpeg_detail <= probe.similarity(WEBP, TOP_QUALITY):
        webp_quality = _search(probe, WEBP, webp_floor, TOP_QUALITY, goal)
        if webp_quality is not None and jpeg_detail <= probe.similarity(WEBP, webp_quality):
            return None
    chosen = _fit_lossy(attempt, JPEG_444, jpeg_quality, jpeg_quality)
    return chosen if isinstance(chosen, _Choice) else None


def _fit_jpeg_only(attempt: _Attempt) -> _Choice | float:
    if attempt.photographic():
        smooth = _fit_lossy(attempt, JPEG_444, JPEG_444_FLOOR, TOP_QUALITY - 1)
        if isinstance(smooth, _Choice):
            return smooth
    if attempt.photographic():
        return _fit_lossy(attempt, JPEG_420, JPEG_PHOTO_FLOOR, TOP_QUALITY - 1)
    text = _fit_lossy(attempt, JPEG_420, JPEG_TEXT_FLOOR, TOP_QUALITY - 1)
    return text if isinstance(text, _Choice) else _fit_palette(attempt, text)


def _fit_lossy(attempt: _Attempt, codec: Codec, lowest: int, highest: int) -> _Choice | float:
    """The highest quality in [lowest, highest] that fits, or the shortfall at `lowest`."""
    probe, limit = attempt.probe, attempt.plan.limit
    goal = attempt.goal()
    for _ in range(FULL_ENCODES_PER_CODEC):
        quality = _search(probe, codec, lowest, highest, goal)
        if quality is None:
            break
        data = probe.full_encode(codec, quality)
        probe.calibrate(codec, quality, len(data))
        if len(data) <= limit:
            return _Choice(codec, quality, data)
        goal = limit * RETRY_GOAL
    return probe.predict(codec, lowest) / (limit * FIRST_GOAL)


def _fit_lossless(attempt: _Attempt, codec: Codec) -> _Choice | float:
    probe, limit = attempt.probe, attempt.plan.limit
    predicted = probe.predict(codec, None)
    if predicted > attempt.goal():
        return predicted / (limit * FIRST_GOAL)
    data = probe.full_encode(codec, None)
    if len(data) <= limit:
        return _Choice(codec, None, data)
    return len(data) / (limit * FIRST_GOAL)


def _search(probe: Probe, codec: Codec, lowest: int, highest: int, goal: float) -> int | None:
    """The highest quality predicted to fit `goal` bytes, or None when even `lowest` does not."""
    high, high_size = highest, probe.predict(codec, highest)
    if high_size <= goal:
        return high
    low, low_size = lowest, probe.predict(codec, lowest)
    if low_size > goal or low >= high:
        return None
    for _ in range(JPEG_SEARCH_STEPS if codec.media_type == "image/jpeg" else SEARCH_STEPS):
        if high - low <= QUALITY_TOLERANCE:
            break
        guess = _interpolate(low, low_size, high, high_size, goal)
        size = probe.predict(codec, guess)
        if size <= goal:
            low, low_size = guess, size
        else:
            high, high_size = guess, size
    return low


def _interpolate(low: int, low_size: float, high: int, high_size: float, goal: float) -> int:
    """Quality where log(size), taken as linear in quality between the brackets, meets `goal`."""
    span = math.log(high_size) - math.log(low_size)
    if span <= 0:
        return (low + high) // 2
    fraction = (math.log(goal) - math.log(low_size)) / span
    return min(high - 1, max(low + 1, low + int(fraction * (high - low))))


def _shrink(
    source: SourceImage,
    size: tuple[int, int],
    misses: list[tuple[int, float]],
    exponent: float,
    fit_plan: FitPlan,
) -> tuple[int, int]:
    """A smaller size by the factor the last shortfall asks for (at least MAX_SHRINK_STEP)."""
    shortfall = misses[-1][1]
    long_edge = max(size)
    if long_edge <= MIN_LONG_EDGE or math.isinf(shortfall):
        raise _cannot_fit(size, fit_plan)
    linear = min(MAX_SHRINK_STEP, math.sqrt((1 / shortfall) ** (1 / exponent)))
    return fitted_size(source.width, source.height, max(MIN_LONG_EDGE, int(long_edge * linear)))


def _cannot_fit(size: tuple[int, int], fit_plan: FitPlan) -> Refusal:
    return Refusal(
        f"refused: cannot fit in {fit_plan.budget_base64} base64 bytes "
        f"even at {size[0]}x{size[1]} pixels"
    )
