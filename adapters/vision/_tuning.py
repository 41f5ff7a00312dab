"""How the local OCR backend runs (`auxiliary.vision.ocr` in the agent config): what its
settings mean for a run. The settings, their defaults and their checks are the engine's
(`engine.facts.auxiliary`, whose `_ocr` module tables the keys; `lint --config` runs the
same checks).
"""

from __future__ import annotations

from typing import Final

from visiongate.engine.facts.auxiliary import OcrSettings, default_threads, usable_cores

__all__ = ["DET_MIN_SIDE", "OcrSettings", "default_threads", "detection_scale", "usable_cores"]

DET_MIN_SIDE: Final = 96
"""Only images whose shorter side is below this are scaled up for detection, to this.

RapidOCR scales every image up until its shorter side is 736 px. Screenshot text is drawn
at its natural size, and detection at 2x or more gave boxes on which the recogniser lost
most spaces (a 900x100 strip of 15 px text read `serverforecastbudget`; at 1x, exact)."""


def detection_scale(width: int, height: int, settings: OcrSettings) -> float:
    """The scale detection runs at for a whole image of this size.

    Screenshots are read at their own size; only tiny images are scaled up (`DET_MIN_SIDE`),
    and large ones down so the longer side is at most `det_max_side`.
    """
    scale = max(1.0, DET_MIN_SIDE / max(1, min(width, height)))
    longest = max(width, height) * scale
    if longest > settings.det_max_side:
        scale *= settings.det_max_side / longest
    return scale
