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

from typing import Final

from PIL import Image

from ._decode import DecodedImage
from ._normalize import ColourConversion, converter, opaque

RESAMPLE: Final = Image.Resampling.BILINEAR
"""Pillow's antialiased triangle filter: 40% faster than BICUBIC at screenshot scales (24 vs 40 ms,
2560x1440 to 1568x882) for 0.001-0.005 SSIM on text encoded as JPEG; LANCZOS costs 35% more
than BICUBIC again, and BOX or an unfiltered affine transform lose 0.03 SSIM (bench_images)."""
REDUCING_GAP: Final = 2.0
"""Box-reduce first only for 4x or larger reductions, where Pillow calls the result faithful."""
BAND_PIXELS: Final = 1 << 20
"""Pixels converted at a time while the working copy is built (a few MB, whatever the image)."""

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
        self._region = (0.0, 0.0, pixels.width / factor[0], pixels.height / factor[1])
        self.image = working_copy(pixels, factor)
        """Pixels as stored (not yet upright), reduced, premultiplied (`RGBa`, `La`) with alpha.
        No metadata: encoders copy comments and profiles from an image's `info`."""
        self._colour = ColourConversion.from_profile(decoded.icc_profile)

    def at(self, size: tuple[int, int]) -> Image.Image:
        """The whole image, upright, in sRGB, at `size` (as displayed)."""
        image = self.image
        stored = self._stored(size)
        if image.size != stored or self._region != (0, 0, *image.size):
            image = image.resize(stored, RESAMPLE, box=self._region, reducing_gap=REDUCING_GAP)
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
        scale_x, scale_y = self._region[2] / width, self._region[3] / height
        mosaic = Image.new(self.image.mode, (columns * tile, rows * tile))
        for column in range(columns):
            x = column * (width - tile) // max(1, columns - 1)
            for row in range(rows):
                y = row * (height - tile) // max(1, rows - 1)
                box = (x * scale_x, y * scale_y, (x + tile) * scale_x, (y + tile) * scale_y)
                piece = self.image.resize((tile, tile), RESAMPLE, box=box)
                mosaic.paste(piece, (column * tile, row * tile))
        return _straight(mosaic)

    def _stored(self, size: tuple[int, int]) -> tuple[int, int]:
        return (size[1], size[0]) if self._transposed else size


def reduction(source: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The box reduction Pillow's resize would apply first, per axis, with REDUCING_GAP."""
    return (
        int(source[0] / size[0] / REDUCING_GAP) or 1,
        int(source[1] / size[1] / REDUCING_GAP) or 1,
    )


def working_copy(pixels: Image.Image, factor: tuple[int, int]) -> Image.Image:
    """`pixels` in a standard mode, premultiplied if translucent, reduced by `factor`.

    Built a band of rows at a time, so the only full-size buffer is `pixels` itself; when
    nothing needs changing, `pixels` is returned (with its metadata dropped).
    """
    if factor == (1, 1) and pixels.mode in ("L", "RGB") and "transparency" not in pixels.info:
        pixels.info = {}
        return pixels
    convert = converter(pixels)
    # A fully opaque alpha channel is dropped before anything is built from it.
    drop_alpha = pixels.mode in _PREMULTIPLIED and opaque(pixels)
    rows = max(factor[1], BAND_PIXELS // max(1, pixels.width) // factor[1] * factor[1])
    copy: Image.Image | None = None
    lowest_alpha = 255
    for top in range(0, pixels.height, rows):
        band = convert(pixels.crop((0, top, pixels.width, min(pixels.height, top + rows))))
        if drop_alpha:
            band = band.convert(band.mode[:-1])
        elif band.mode in _PREMULTIPLIED:
            lowest_alpha = min(lowest_alpha, _lowest_alpha(band))
            band = band.convert(_PREMULTIPLIED[band.mode])
        if factor != (1, 1):
            band = band.reduce(factor)
        if copy is None:
            size = (-(-pixels.width // factor[0]), -(-pixels.height // factor[1]))
            copy = Image.new(band.mode, size)
        copy.paste(band, (0, top // factor[1]))
    assert copy is not None  # an image has at least one row
    if copy.mode in _STRAIGHT and lowest_alpha == 255:
        return copy.convert(_STRAIGHT[copy.mode][:-1])  # a palette's alpha turned out opaque
    return copy


def _lowest_alpha(band: Image.Image) -> int:
    alpha = band.getextrema()[-1]
    return int(alpha[0]) if isinstance(alpha, tuple) else 255


def _straight(image: Image.Image) -> Image.Image:
    """`image` with straight (not premultiplied) alpha, as encoders expect."""
    return image.convert(_STRAIGHT[image.mode]) if image.mode in _STRAIGHT else image
