"""Fitting one image to its budget: the search at each size (`_at_size`), shrinking by the
factor the last shortfall asks for until one fits or the image is too small (`Refusal`)."""

from __future__ import annotations

import dataclasses
import math

from .._decode import fitted_size
from .._probe import Probe
from .._source import SourceImage
from .._types import Refusal
from ._at_size import Attempt, Choice, Kind, fit_at_size, fit_legible
from ._plan import (
    LOSSLESS_AREA_EXPONENT,
    MAX_SHRINK_STEP,
    MAX_SHRINKS,
    MIN_LONG_EDGE,
    PHOTO_AREA_EXPONENT,
    TEXT_AREA_EXPONENT,
    Encoded,
    FitPlan,
)

__all__ = ["fit"]


def fit(source: SourceImage, size: tuple[int, int], fit_plan: FitPlan) -> Encoded:
    """The most detailed encoding of `source` at `size` or smaller; `Refusal` if none fits."""
    probes: list[Probe] = []
    misses: list[tuple[int, float]] = []
    kind = Kind()
    for _ in range(MAX_SHRINKS + 1):
        probe = Probe(source, size)
        probes.append(probe)
        within = _fit_within_source(probe, fit_plan, kind) if len(probes) == 1 else None
        attempt = Attempt(probe, fit_plan, kind)
        outcome = within if within is not None else fit_at_size(attempt)
        if not isinstance(outcome, Choice) and fit_plan.lossy:
            outcome = fit_legible(attempt)
        if isinstance(outcome, Choice):
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


def _fit_within_source(probe: Probe, fit_plan: FitPlan, kind: Kind) -> Choice | None:
    """An encoding at this size in no more bytes than the source had, at or above the quality
    floors; None when there is none (or the source is larger than the budget anyway)."""
    cap = fit_plan.source_bytes
    if cap is None or cap >= fit_plan.limit:
        return None
    capped = fit_at_size(Attempt(probe, dataclasses.replace(fit_plan, limit=cap), kind))
    return capped if isinstance(capped, Choice) else None


def _exponent(misses: list[tuple[int, float]], fit_plan: FitPlan, kind: Kind) -> float:
    """How bytes scale with area: measured from the last two sizes, else the kind's typical."""
    if len(misses) >= 2:
        (area_before, before), (area, now) = misses[-2], misses[-1]
        if area < area_before and 0 < now < before and not math.isinf(before):
            measured = math.log(before / now) / math.log(area_before / area)
            return min(1.2, max(0.5, measured))
    if not fit_plan.lossy:
        return LOSSLESS_AREA_EXPONENT
    return PHOTO_AREA_EXPONENT if kind.photographic else TEXT_AREA_EXPONENT


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
