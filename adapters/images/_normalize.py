"""Bring a decoded frame to 8-bit L, LA, RGB or RGBA in sRGB, whatever it was stored in."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Final

from PIL import Image, ImageCms

from ._types import Refusal

_STANDARD: Final = frozenset({"L", "LA", "RGB", "RGBA"})
_HIGH_DEPTH: Final = frozenset({"I", "I;16", "I;16L", "I;16B", "I;16N", "F"})
_TO_RGB: Final = frozenset({"RGBX", "CMYK", "YCbCr", "LAB", "HSV"})

Converter = Callable[[Image.Image], Image.Image]


def standard_mode(image: Image.Image) -> Image.Image:
    """8-bit L, LA, RGB or RGBA; an alpha channel that is fully opaque is dropped."""
    converted = converter(image)(image)
    if converted.mode in ("LA", "RGBA") and opaque(converted):
        return converted.convert(converted.mode[:-1])
    return converted


def converter(image: Image.Image) -> Converter:
    """What brings any strip of `image` to the mode the whole image gets (alpha kept).

    Deep samples are scaled by the extrema of the whole image, read once, so that every
    strip is scaled alike without a converted copy of the whole image.
    """
    if image.mode not in _HIGH_DEPTH:
        return _convert
    sixteen = image.mode.startswith("I;16")
    low, high = _band_extrema(image)
    scale, offset = _linear_map("I" if sixteen else image.mode, sixteen, low, high)
    return lambda strip: _to_eight_bit(strip, scale, offset)


def _convert(image: Image.Image) -> Image.Image:
    mode = image.mode
    if mode in _STANDARD:
        if mode in ("L", "RGB") and "transparency" in image.info:
            return image.convert(mode + "A" if mode == "L" else "RGBA")
        return image
    if mode in _HIGH_DEPTH:
        return converter(image)(image)
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


def opaque(image: Image.Image) -> bool:
    """Whether every alpha value of an LA or RGBA image is 255."""
    alpha = image.getextrema()[-1]
    return isinstance(alpha, tuple) and alpha[0] == 255


def _to_eight_bit(image: Image.Image, scale: float, offset: float) -> Image.Image:
    """Scale 16-bit, 32-bit and float samples into 0..255 instead of clipping them."""
    wide = image.convert("I") if image.mode.startswith("I;16") else image
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


class ColourConversion:
    """Pixels described by an RGB colour profile, converted to sRGB when they are shown.

    Outputs never carry a profile: an ICC profile is free-form data (its description and
    copyright tags are text, and it may hold private tags), and models read pixels as sRGB.
    A profile that lcms cannot read is ignored and the pixels taken as sRGB, as browsers do.
    """

    def __init__(self, profile: ImageCms.ImageCmsProfile | None) -> None:
        self._profile = profile
        self._transforms: dict[str, ImageCms.ImageCmsTransform] = {}

    @classmethod
    def from_profile(cls, icc: bytes | None) -> ColourConversion:
        """The conversion for an embedded profile; none for grey, CMYK or unreadable ones."""
        if icc is None or icc[16:20] != b"RGB ":
            return cls(None)
        try:
            return cls(ImageCms.ImageCmsProfile(io.BytesIO(icc)))
        except (ImageCms.PyCMSError, OSError, ValueError, TypeError, ImportError):
            return cls(None)

    def apply(self, image: Image.Image) -> Image.Image:
        """`image` (RGB or RGBA) in sRGB; any other image unchanged."""
        transform = self._transform(image.mode)
        if transform is None:
            return image
        converted = ImageCms.applyTransform(image, transform)
        return converted if converted is not None else image

    def _transform(self, mode: str) -> ImageCms.ImageCmsTransform | None:
        if self._profile is None or mode not in ("RGB", "RGBA"):
            return None
        if mode not in self._transforms:
            try:
                srgb = ImageCms.createProfile("sRGB")
                self._transforms[mode] = ImageCms.buildTransform(self._profile, srgb, mode, mode)
            except (ImageCms.PyCMSError, OSError, ValueError, TypeError, ImportError):
                self._profile = None  # lcms cannot use it: the pixels are taken as sRGB
                return None
        return self._transforms[mode]
