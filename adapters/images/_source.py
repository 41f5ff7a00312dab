"""A decoded frame that can be shown at any size: reduced once, a band at a time, then resampled.

Work and memory stay bounded by the pixel count. The decoded frame is brought to a standard
mode, premultiplied when it has alpha, and box-reduced toward the first output size one band
of rows at a time into a working copy; the frame is then dropped. Every later resize (the
whole image at a candidate size, or a tile of the size predictor's mosaic) reads the working
copy, which is already premultiplied. Pillow's own resize of an RGBA image converts the whole
image to premultiplied alpha and back on every call, so the predictor's 100 tiles cost 100
full conversions (38 s for an 8192x8192 translucent PNG); here the conversion happens once.
The reduction is the one Pillow's `reducing_gap` would make for the first size, so that size
comes out exactly as a direct resize would give it.
"""

from __future__ import annotations

import copy
import math
from typing import Final

from PIL import Image

from ._decode import DecodedImage
from ._normalize import ColourConversion, converter

RESAMPLE: Final = Image.Resampling.BILINEAR
"""Pillow's antialiased triangle filter: 40% faster than BICUBIC at screenshot scales (24 vs 40 ms,
2560x1440 to 1568x882) for 0.001-0.005 SSIM on text encoded as JPEG; LANCZOS costs 35% more
than BICUBIC again, and BOX or an unfiltered affine transform lose 0.03 SSIM (bench_images)."""
REDUCING_GAP: Final = 2.0
"""Box-reduce first only for 4x or larger reductions, where Pillow calls the result faithful."""
BAND_PIXELS: Final = 1 << 20
"""Pixels converted at a time while the working copy is built (a few MB, whatever the image)."""

Box = tuple[float, float, float, float]
_STANDARD: Final = frozenset({"L", "LA", "RGB", "RGBA"})
_PREMULTIPLIED: Final = {"RGBA": "RGBa", "LA": "La"}
_STRAIGHT: Final = {"RGBa": "RGBA", "La": "LA"}
_TRANSPOSE: Final = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}


class SourceImage:
    """The first frame in a standard mode, with its size and orientation as displayed."""

    def __init__(self, pixels: Image.Image, decoded: DecodedImage, size: tuple[int, int]) -> None:
        """Take over `pixels` (the caller drops them) to be shown at `size` or smaller."""
        self.width = decoded.width
        """Width of the original as displayed."""
        self.height = decoded.height
        self._orientation = decoded.orientation
        self._transposed = decoded.transposed
        factor = reduction(pixels.size, self._stored(size))
        self._region: Box = (0.0, 0.0, pixels.width / factor[0], pixels.height / factor[1])
        self.image = working_copy(pixels, factor)
        """Pixels as stored (not yet upright), in a standard mode; when reduced, translucent
        pixels are premultiplied (`RGBa`, `La`). No metadata: Pillow's encoders would copy
        comments and profiles from an image's `info`."""
        self._colour = ColourConversion.from_profile(decoded.icc_profile)

    def at(self, size: tuple[int, int]) -> Image.Image:
        """The whole image, upright, in sRGB, at `size` (as displayed)."""
        image = self.image
        stored = self._stored(size)
        if image.size != stored or self._region != (0, 0, *image.size):
            image = resample(image, stored, self._region)
        else:
            image = _straight(image)
        if self._orientation != 1:
            image = image.transpose(_TRANSPOSE[self._orientation])
        return self._colour.apply(image)

    def tiles(self, size: tuple[int, int], tile: int, grid: int) -> Image.Image:
        """Up to grid x grid tiles, spread evenly, as `at(size)` would show them.

        Each tile is resampled from the region of the working copy it covers, so sizes can be
        predicted at any scale without resizing the whole image. Tiles keep the stored
        orientation and colours: encoded size depends on neither.
        """
        width, height = self._stored(size)
        columns, rows = min(grid, width // tile), min(grid, height // tile)
        left, top, right, bottom = self._region
        scale_x, scale_y = (right - left) / width, (bottom - top) / height
        mosaic = Image.new(
            _STRAIGHT.get(self.image.mode, self.image.mode), (columns * tile, rows * tile)
        )
        for column in range(columns):
            x = column * (width - tile) // max(1, columns - 1)
            for row in range(rows):
                y = row * (height - tile) // max(1, rows - 1)
                box = (
                    left + x * scale_x,
                    top + y * scale_y,
                    left + (x + tile) * scale_x,
                    top + (y + tile) * scale_y,
                )
                mosaic.paste(resample(self.image, (tile, tile), box), (column * tile, row * tile))
        return mosaic

    def upright(self) -> SourceImage:
        """The same image with its working copy turned upright (a copy when it is not already),
        so regions of it can be named as displayed."""
        if self._orientation == 1:
            return self
        turned = copy.copy(self)
        operation = _TRANSPOSE[self._orientation]
        turned.image = self.image.transpose(operation)
        corners = (
            _turned_point(operation, self.image.size, self._region[0], self._region[1]),
            _turned_point(operation, self.image.size, self._region[2], self._region[3]),
        )
        (x0, y0), (x1, y1) = corners
        turned._region = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        turned._orientation, turned._transposed = 1, False
        return turned

    def region(self, left: int, top: int, right: int, bottom: int) -> SourceImage:
        """A view of the part (left, top, right, bottom) of an upright image, as displayed; it
        shares the working copy, so it costs nothing until it is resampled."""
        if self._orientation != 1:
            raise ValueError("regions are taken of an upright image")
        view = copy.copy(self)
        x0, y0, x1, y1 = self._region
        scale_x, scale_y = (x1 - x0) / self.width, (y1 - y0) / self.height
        view._region = (
            x0 + left * scale_x,
            y0 + top * scale_y,
            x0 + right * scale_x,
            y0 + bottom * scale_y,
        )
        view.width, view.height = right - left, bottom - top
        return view

    def _stored(self, size: tuple[int, int]) -> tuple[int, int]:
        return (size[1], size[0]) if self._transposed else size


def _turned_point(
    operation: Image.Transpose, size: tuple[int, int], x: float, y: float
) -> tuple[float, float]:
    """Where the point (x, y) of an image of `size` lands once the image is transposed."""
    width, height = size
    return {
        Image.Transpose.FLIP_LEFT_RIGHT: (width - x, y),
        Image.Transpose.ROTATE_180: (width - x, height - y),
        Image.Transpose.FLIP_TOP_BOTTOM: (x, height - y),
        Image.Transpose.TRANSPOSE: (y, x),
        Image.Transpose.ROTATE_270: (height - y, x),
        Image.Transpose.TRANSVERSE: (height - y, width - x),
        Image.Transpose.ROTATE_90: (y, width - x),
    }[operation]


def reduction(source: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The box reduction Pillow's resize would apply first, per axis, with REDUCING_GAP."""
    return (
        int(source[0] / size[0] / REDUCING_GAP) or 1,
        int(source[1] / size[1] / REDUCING_GAP) or 1,
    )


def working_copy(pixels: Image.Image, factor: tuple[int, int]) -> Image.Image:
    """`pixels` in a standard mode without metadata, reduced by `factor`.

    Built a band of rows at a time, so the only full-size buffer besides `pixels` is the copy
    itself. Unreduced, `pixels` is kept as it is when its mode is already standard (straight
    alpha then: `resample` premultiplies a band at a time); reduced, translucent pixels are
    premultiplied before the box filter, as Pillow's resize does, and stay premultiplied.
    """
    drop_alpha = _opaque(pixels)
    if factor == (1, 1) and pixels.mode in _STANDARD and not drop_alpha:
        pixels.info = {}
        return pixels
    convert = converter(pixels)
    rows = max(factor[1], BAND_PIXELS // max(1, pixels.width) // factor[1] * factor[1])
    copy: Image.Image | None = None
    lowest_alpha = 255
    for top in range(0, pixels.height, rows):
        band = convert(pixels.crop((0, top, pixels.width, min(pixels.height, top + rows))))
        if drop_alpha and band.mode in _PREMULTIPLIED:
            band = band.convert(band.mode[:-1])
        elif band.mode in _PREMULTIPLIED:
            lowest_alpha = min(lowest_alpha, _lowest_alpha(band))
            if factor != (1, 1):
                band = band.convert(_PREMULTIPLIED[band.mode])
        if factor != (1, 1):
            band = band.reduce(factor)
        if copy is None:
            size = (-(-pixels.width // factor[0]), -(-pixels.height // factor[1]))
            copy = Image.new(band.mode, size)
        copy.paste(band, (0, top // factor[1]))
    assert copy is not None  # an image has at least one row
    if lowest_alpha == 255 and copy.mode in ("RGBA", "LA", "RGBa", "La"):
        return copy.convert(copy.mode[0] if copy.mode[0] == "L" else "RGB")  # opaque after all
    return copy


def resample(image: Image.Image, size: tuple[int, int], box: Box) -> Image.Image:
    """The `box` region of a working copy at `size`, with straight alpha.

    Pillow's resize of a straight-alpha image premultiplies the whole image first; here only
    the rows each band of the output reads are premultiplied (the triangle filter reads one
    output pixel's width beyond its own), which gives the same pixels.
    """
    if image.mode not in _PREMULTIPLIED:
        return _straight(image.resize(size, RESAMPLE, box=box, reducing_gap=REDUCING_GAP))
    scale_x, scale_y = (box[2] - box[0]) / size[0], (box[3] - box[1]) / size[1]
    reach_x, reach_y = max(scale_x, 1.0) + 2, max(scale_y, 1.0) + 2
    left = max(0, math.floor(box[0] - reach_x))
    right = min(image.width, math.ceil(box[2] + reach_x))
    output = Image.new(image.mode, size)
    rows = max(1, int(BAND_PIXELS / ((right - left) * max(scale_y, 1.0))))  # source pixels
    for top in range(0, size[1], rows):
        bottom = min(size[1], top + rows)
        first, last = box[1] + top * scale_y, box[1] + bottom * scale_y
        upper = max(0, math.floor(first - reach_y))
        lower = min(image.height, math.ceil(last + reach_y))
        piece = image.crop((left, upper, right, lower)).convert(_PREMULTIPLIED[image.mode])
        region = (box[0] - left, first - upper, box[2] - left, last - upper)
        band = piece.resize((size[0], bottom - top), RESAMPLE, box=region)
        output.paste(_straight(band), (0, top))
    return output


def _opaque(pixels: Image.Image) -> bool:
    """Whether an alpha channel or a palette's transparency is present but never used."""
    if pixels.mode in _PREMULTIPLIED:
        return _lowest_alpha(pixels) == 255
    if pixels.mode == "P" and pixels.has_transparency_data:
        return _palette_opaque(pixels)
    return False


def _palette_opaque(pixels: Image.Image) -> bool:
    transparency = pixels.info.get("transparency")
    if isinstance(transparency, int):
        translucent = {transparency}
    elif isinstance(transparency, bytes):
        translucent = {index for index, alpha in enumerate(transparency) if alpha < 255}
    else:
        return False  # alpha in the palette itself: left to the per-band check
    counts = pixels.histogram()
    return not any(counts[index] for index in translucent if index < len(counts))


def _lowest_alpha(image: Image.Image) -> int:
    low = image.getchannel("A").getextrema()[0]  # one band: all four would copy four
    return int(low) if isinstance(low, (int, float)) else 0


def _straight(image: Image.Image) -> Image.Image:
    """`image` with straight (not premultiplied) alpha, as encoders expect."""
    return image.convert(_STRAIGHT[image.mode]) if image.mode in _STRAIGHT else image
