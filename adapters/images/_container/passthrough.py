"""Send an image as the tool encoded it: its metadata removed whole, its pixels never re-encoded.

An image may go as it is when its format is accepted, it fits the budget and the ceiling once
its metadata is gone (`strip`), it is upright, has one frame, is not CMYK, and any colour
profile it carries draws the same colours as sRGB (models read pixels as sRGB; a profile that
does not is applied by re-encoding instead). Its bytes must then hold exactly one well-formed
image whose pixel data fill the size the header declares. How that is checked, measured on the
bench photos (`bench/bench_images.py`):

- PNG, structurally: every chunk's CRC, a valid header, and the zlib stream inflated and
  counted to exactly the rows declared, each row starting with a valid filter type. No pixel
  is unfiltered or converted: 1.1 ms for a 512x512 photo where a decode took 2.6 ms.
- JPEG, by a decode at 1/8 scale (libjpeg's DCT scaling, which still reads every coefficient):
  a short scan leaves its mark at any scale, and the filler check runs at that scale too.
- GIF and WebP, by a full decode: their compressed streams have no cheaper proof.
Anything the structural check cannot vouch for (interlaced PNG, a missing palette) is decoded.
"""

from __future__ import annotations

import functools
import io
import struct
from dataclasses import dataclass, field
from typing import Final

from PIL import Image, ImageCms

from .._decode import (
    DecodedImage,
    check_pixels,
    decode,
    decoding,
    icc_profile_of,
    orientation_from,
    orientation_of,
)
from .._sniff import DECODABLE
from .._types import ImageTarget
from .png_walk import png_chunks, png_pixel_data
from .strip import strip_metadata

_GRID_LEVELS: Final = (*range(0, 256, 16), 255)
_SRGB_TOLERANCE: Final = 2
"""Largest difference, in 8-bit levels, between a profile's colours and sRGB's still taken as
the same colours (lcms rounds an sRGB-to-sRGB transform to within 1)."""
_JPEG_CHECK_SCALE: Final = 8


@dataclass(frozen=True)
class Header:
    """What the header says, read without decoding any pixel."""

    media_type: str
    width: int
    """As stored (before EXIF orientation)."""
    height: int
    mode: str
    orientation: int
    icc_profile: bytes | None = field(repr=False)

    @property
    def displayed(self) -> tuple[int, int]:
        """Width and height as displayed (after EXIF orientation)."""
        turned = self.orientation in (5, 6, 7, 8)
        return (self.height, self.width) if turned else (self.width, self.height)


def read_header(data: bytes, media_type: str) -> Header:
    """The header of `data`; raises `Refusal` for a header that cannot be read or is a bomb."""
    with (
        decoding(media_type),
        Image.open(io.BytesIO(data), formats=[DECODABLE[media_type]]) as image,
    ):
        check_pixels(image.width, image.height)
        orientation = _png_orientation(data) if image.format == "PNG" else orientation_of(image)
        return Header(
            media_type, image.width, image.height, image.mode, orientation, icc_profile_of(image)
        )


def _png_orientation(data: bytes) -> int:
    """The orientation in a PNG's `eXIf` chunk, read without decoding: Pillow's `getexif` loads
    the whole image to look for an `eXIf` after the pixel data (2 ms for a 512x512 photo)."""
    for kind, start, end in png_chunks(data):
        if kind == b"eXIf":
            exif = Image.Exif()
            try:
                exif.load(data[start : end - 4])
            except (OSError, SyntaxError, ValueError, EOFError, struct.error):
                return 1
            return orientation_from(exif)
    return 1


def pass_through(
    data: bytes, header: Header, target: ImageTarget
) -> tuple[bytes, DecodedImage, tuple[str, ...]] | None:
    """The bytes to send as they are (metadata removed), the facts, and what was removed; None
    when the image has to be re-encoded. Raises `Refusal` for bytes a decoder would refuse."""
    if not _may_pass(header, target):
        return None
    cleaned = strip_metadata(data, header.media_type)
    if cleaned.blockers or 4 * ((len(cleaned.data) + 2) // 3) > target.budget_base64:
        return None
    decoded = _verified(cleaned.data, header, target.max_edge_px)
    if decoded is None or not decoded.bare or decoded.frames != 1:
        return None
    return cleaned.data, decoded, cleaned.removed


def _may_pass(header: Header, target: ImageTarget) -> bool:
    return (
        header.media_type in target.formats
        and max(header.width, header.height) <= target.max_edge_px
        and header.orientation == 1
        # Providers decode CMYK JPEG inconsistently (often with inverted colours).
        and header.mode != "CMYK"
        and draws_as_srgb(header.icc_profile)
    )


def _verified(data: bytes, header: Header, max_edge: int) -> DecodedImage | None:
    if header.media_type == "image/png" and _png_intact(data):
        return DecodedImage(
            media_type=header.media_type,
            source_width=header.width,
            source_height=header.height,
            frames=1,
            orientation=1,
            bare=True,
            mode=header.mode,
            icc_profile=None,
        )
    if header.media_type == "image/jpeg":
        # Fitted to an eighth of its long edge, the decode is drafted at 1/8 scale.
        max_edge = max(1, -(-max(header.width, header.height) // _JPEG_CHECK_SCALE))
    decoded, _pixels = decode(data, header.media_type, max_edge, exact=True)
    return decoded


def _png_intact(data: bytes) -> bool:
    """Whether a PNG stripped of its metadata needs no decode to be trusted (see the module)."""
    pixel_data = png_pixel_data(data)
    if pixel_data is None or not pixel_data.exact or not pixel_data.filters_valid:
        return False
    colour_type = data[25]
    return colour_type != 3 or b"PLTE" in data[: data.find(b"IDAT")]


def draws_as_srgb(icc: bytes | None) -> bool:
    """Whether pixels under this profile show as they would without it: no profile, one the
    stage ignores anyway (grey, CMYK, unreadable), or an RGB one that maps every colour of a
    17-level grid to itself within `_SRGB_TOLERANCE` (2 ms, once per profile)."""
    return icc is None or _srgb_equivalent(icc)


@functools.lru_cache(maxsize=32)
def _srgb_equivalent(icc: bytes) -> bool:
    if icc[16:20] != b"RGB ":
        return True  # the re-encode path ignores it too (see `ColourConversion`)
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        transform = ImageCms.buildTransform(profile, ImageCms.createProfile("sRGB"), "RGB", "RGB")
        grid = _grid()
        mapped = ImageCms.applyTransform(grid, transform)
    except (ImageCms.PyCMSError, OSError, ValueError, TypeError, ImportError):
        return True  # unreadable: ignored by the re-encode path as well
    if mapped is None:
        return True
    return max(abs(a - b) for a, b in zip(grid.tobytes(), mapped.tobytes(), strict=True)) <= (
        _SRGB_TOLERANCE
    )


@functools.cache
def _grid() -> Image.Image:
    levels = _GRID_LEVELS
    values = bytes(v for r in levels for g in levels for b in levels for v in (r, g, b))
    return Image.frombytes("RGB", (len(levels) ** 3, 1), values)
