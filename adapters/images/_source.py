"""A decoded frame that can be shown at any size: whole and upright, or as a sample of tiles."""

from __future__ import annotations

from typing import Final

from PIL import Image

from ._decode import DecodedImage
from ._normalize import standard_mode

RESAMPLE: Final = Image.Resampling.BILINEAR
"""Pillow's antialiased triangle filter: 40% faster than BICUBIC at screenshot scales (24 vs 40 ms,
2560x1440 to 1568x882) for 0.001-0.005 SSIM on text encoded as JPEG; LANCZOS costs 35% more
than BICUBIC again, and BOX or an unfiltered affine transform lose 0.03 SSIM (bench_images)."""
REDUCING_GAP: Final = 2.0
"""Box-reduce first only for 4x or larger reductions, where Pillow calls the result faithful."""

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

    def __init__(self, decoded: DecodedImage) -> None:
        self.image = standard_mode(decoded.image)
        """Pixels as stored (not yet upright), possibly already reduced by JPEG draft."""
        self.width = decoded.width
        """Width of the original as displayed."""
        self.height = decoded.height
        self._orientation = decoded.orientation
        self._transposed = decoded.transposed

    def at(self, size: tuple[int, int]) -> Image.Image:
        """The whole image, upright, at `size` (as displayed)."""
        image = self.image
        stored = self._stored(size)
        if image.size != stored:
            image = image.resize(stored, RESAMPLE, reducing_gap=REDUCING_GAP)
        if self._orientation != 1:
            image = image.transpose(_TRANSPOSE[self._orientation])
        return image

    def tiles(self, size: tuple[int, int], tile: int, grid: int) -> Image.Image:
        """Up to grid x grid tiles, spread evenly, as `at(size)` would show them.

        Each tile is resampled from the source region it covers, so sizes can be predicted at
        any scale without resizing the whole image. Tiles keep the stored orientation: encoded
        size does not depend on it.
        """
        width, height = self._stored(size)
        columns, rows = min(grid, width // tile), min(grid, height // tile)
        scale_x, scale_y = self.image.width / width, self.image.height / height
        mosaic = Image.new(self.image.mode, (columns * tile, rows * tile))
        for column in range(columns):
            x = column * (width - tile) // max(1, columns - 1)
            for row in range(rows):
                y = row * (height - tile) // max(1, rows - 1)
                box = (x * scale_x, y * scale_y, (x + tile) * scale_x, (y + tile) * scale_y)
                piece = self.image.resize((tile, tile), RESAMPLE, box=box)
                mosaic.paste(piece, (column * tile, row * tile))
        return mosaic

    def _stored(self, size: tuple[int, int]) -> tuple[int, int]:
        return (size[1], size[0]) if self._transposed else size
