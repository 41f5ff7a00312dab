"""Bring a decoded frame to 8-bit L, LA, RGB or RGBA, whatever mode and depth it was stored in."""

from __future__ import annotations

from typing import Final

from PIL import Image

from ._types import Refusal

_STANDARD: Final = frozenset({"L", "LA", "RGB", "RGBA"})
_HIGH_DEPTH: Final = frozenset({"I", "I;16", "I;16L", "I;16B", "I;16N", "F"})
_TO_RGB: Final = frozenset({"RGBX", "CMYK", "YCbCr", "LAB", "HSV"})


def standard_mode(image: Image.Image) -> Image.Image:
    """8-bit L, LA, RGB or RGBA; an alpha channel that is fully opaque is dropped."""
    converted = _convert(image)
    if converted.mode in ("LA", "RGBA") and _opaque(converted):
        return converted.convert(converted.mode[:-1])
    return converted


def _convert(image: Image.Image) -> Image.Image:
    mode = image.mode
    if mode in _STANDARD:
        if mode in ("L", "RGB") and "transparency" in image.info:
            return image.convert(mode + "A" if mode == "L" else "RGBA")
        return image
    if mode in _HIGH_DEPTH:
        return _to_eight_bit(image)
    if mode == "1":
        return image.convert("L")
    if mode in ("P", "PA"):
        return image.convert("RGBA" if image.has_transparency_data else "RGB")
    if mode == "RGBa":
        return image.convert("RGBA")
    if mode in _TO_RGB:
        # CMYK is converted without colour management; Pillow already undoes Adobe's inversion.
        return image.convert("RGB")
    raise Refusal(f"refused: pixel mode `{mode}` is not supported")


def _opaque(image: Image.Image) -> bool:
    extrema = image.getextrema()
    alpha = extrema[-1]
    return isinstance(alpha, tuple) and alpha[0] == 255


def _to_eight_bit(image: Image.Image) -> Image.Image:
    """Scale 16-bit, 32-bit and float samples into 0..255 instead of clipping them."""
    sixteen = image.mode.startswith("I;16")
    wide = image.convert("I") if sixteen else image
    low, high = _band_extrema(wide)
    scale, offset = _linear_map(wide.mode, sixteen, low, high)
    if scale == 1.0 and offset == 0.0:
        return wide.convert("L")
    return wide.point(lambda value: value * scale + offset).convert("L")


def _band_extrema(image: Image.Image) -> tuple[float, float]:
    extrema = image.getextrema()
    low, high = extrema[0], extrema[1]
    if isinstance(low, tuple) or isinstance(high, tuple):
        raise Refusal(f"refused: pixel mode `{image.mode}` is not supported")
    return float(low), float(high)


def _linear_map(mode: str, sixteen: bool, low: float, high: float) -> tuple[float, float]:
    if sixteen or (mode == "I" and low >= 0 and 255 < high <= 65535):
        return 255 / 65535, 0.0
    if low >= 0 and high <= 255 and (mode == "I" or high > 1):
        return 1.0, 0.0
    if mode == "F" and low >= 0 and high <= 1:
        return 255.0, 0.0
    if high <= low:
        return 1.0, 0.0
    scale = 255 / (high - low)
    return scale, -low * scale
