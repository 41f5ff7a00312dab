"""The search at one size: which codec and quality fit the budget, predicted from the probe's
sample encodes and checked by full encodes (the floors and goals are `_plan`'s)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._encode import JPEG_420, JPEG_444, PNG_PALETTE, WEBP, Codec
from .._probe import Probe
from ._plan import (
    FIRST_GOAL,
    FULL_ENCODES_PER_CODEC,
    JPEG_444_FLOOR,
    JPEG_CRISP_TEXT,
    JPEG_LEGIBLE_FLOOR,
    JPEG_PHOTO_FLOOR,
    JPEG_SEARCH_STEPS,
    JPEG_TEXT_FLOOR,
    PALETTE_SIMILARITY,
    QUALITY_TOLERANCE,
    RETRY_GOAL,
    SEARCH_STEPS,
    TOP_QUALITY,
    WEBP_LEGIBLE_FLOOR,
    WEBP_PHOTO_FLOOR,
    WEBP_TEXT_FLOOR,
    FitPlan,
)


@dataclass(frozen=True)
class Choice:
    codec: Codec
    quality: int | None
    data: bytes = field(repr=False)


class Kind:
    """Whether the content is photographic: measured at the first size, kept while shrinking."""

    def __init__(self) -> None:
        self.photographic: bool | None = None


@dataclass(frozen=True)
class Attempt:
    """One size being tried."""

    probe: Probe
    plan: FitPlan
    kind: Kind

    def photographic(self) -> bool:
        if self.kind.photographic is None:
            self.kind.photographic = self.probe.photographic()
        return self.kind.photographic

    def goal(self) -> float:
        """Bytes a prediction may reach: the whole budget once predictions are exact."""
        return self.plan.limit * (1.0 if self.probe.exact else FIRST_GOAL)


def fit_at_size(attempt: Attempt) -> Choice | float:
    """An encoding at this size, or how far (predicted bytes / goal) the last codec misses."""
    lossless = attempt.plan.lossless
    if lossless is not None and attempt.plan.lossless_first:
        outcome = _fit_lossless(attempt, lossless)
        if isinstance(outcome, Choice) or not attempt.plan.lossy:
            return outcome
    return _fit_lossy_at_size(attempt)


def _fit_lossy_at_size(attempt: Attempt) -> Choice | float:
    formats = attempt.plan.formats
    jpeg, webp = "image/jpeg" in formats, "image/webp" in formats
    if jpeg and isinstance(top := _fit_lossy(attempt, JPEG_444, TOP_QUALITY, TOP_QUALITY), Choice):
        return top
    if not webp:
        return _fit_jpeg_only(attempt)
    if not attempt.photographic():
        return _fit_text(attempt, jpeg=jpeg)
    if jpeg and isinstance(smooth := _jpeg_if_better(attempt, WEBP_PHOTO_FLOOR), Choice):
        return smooth
    return _fit_lossy(attempt, WEBP, WEBP_PHOTO_FLOOR, TOP_QUALITY)


def _fit_text(attempt: Attempt, *, jpeg: bool) -> Choice | float:
    """JPEG 4:2:0 where it keeps text crisp (`JPEG_CRISP_TEXT`), then WebP, then JPEG down to
    its text floor, before any pixels are given up.

    WebP keeps more detail per byte on text, but its encode costs 8x JPEG's (28 vs 3.5 ms at
    1568x882), more than the decode and resize of a 2560x1440 screenshot together, so JPEG
    goes first while it keeps small text crisp. Below that WebP keeps more of it per byte,
    and JPEG's lower qualities are for routes without WebP or where WebP misses too.
    """
    if jpeg:
        crisp = _fit_lossy(attempt, JPEG_420, JPEG_CRISP_TEXT, TOP_QUALITY - 1)
        if isinstance(crisp, Choice):
            return crisp
    webp = _fit_lossy(attempt, WEBP, WEBP_TEXT_FLOOR, TOP_QUALITY)
    if isinstance(webp, Choice):
        return webp
    if jpeg:
        chosen = _fit_lossy(attempt, JPEG_420, JPEG_TEXT_FLOOR, JPEG_CRISP_TEXT - 1)
        if isinstance(chosen, Choice):
            return chosen
    return _fit_palette(attempt, webp)


def fit_legible(attempt: Attempt) -> Choice | float:
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
        if isinstance(jpeg, Choice):
            return jpeg
        shortfall = jpeg
    if "image/webp" in formats:
        webp = _fit_lossy(attempt, WEBP, WEBP_LEGIBLE_FLOOR, TOP_QUALITY)
        if isinstance(webp, Choice):
            return webp
        shortfall = min(shortfall, webp)
    return shortfall


def _fit_palette(attempt: Attempt, shortfall: float) -> Choice | float:
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
    return chosen if isinstance(chosen, Choice) else min(shortfall, chosen)


def _jpeg_if_better(attempt: Attempt, webp_floor: int) -> Choice | None:
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
    return chosen if isinstance(chosen, Choice) else None


def _fit_jpeg_only(attempt: Attempt) -> Choice | float:
    if attempt.photographic():
        smooth = _fit_lossy(attempt, JPEG_444, JPEG_444_FLOOR, TOP_QUALITY - 1)
        if isinstance(smooth, Choice):
            return smooth
    if attempt.photographic():
        return _fit_lossy(attempt, JPEG_420, JPEG_PHOTO_FLOOR, TOP_QUALITY - 1)
    text = _fit_lossy(attempt, JPEG_420, JPEG_TEXT_FLOOR, TOP_QUALITY - 1)
    return text if isinstance(text, Choice) else _fit_palette(attempt, text)


def _fit_lossy(attempt: Attempt, codec: Codec, lowest: int, highest: int) -> Choice | float:
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
            return Choice(codec, quality, data)
        goal = limit * RETRY_GOAL
    return probe.predict(codec, lowest) / (limit * FIRST_GOAL)


def _fit_lossless(attempt: Attempt, codec: Codec) -> Choice | float:
    probe, limit = attempt.probe, attempt.plan.limit
    predicted = probe.predict(codec, None)
    if predicted > attempt.goal():
        return predicted / (limit * FIRST_GOAL)
    data = probe.full_encode(codec, None)
    if len(data) <= limit:
        return Choice(codec, None, data)
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
