"""Whether decoded pixels fill the size their header declares; Pillow accepts both below short.

A PNG whose zlib stream ends after half the rows decodes with the rest black, and a JPEG
whose scans end early (its SOF header claims 8192x8192 over 640x480 of data) decodes with the
rest mid-grey: libjpeg fills the missing blocks with zeros and only warns. Neither is counted
for every image; each leaves a mark that is cheap to look for, and only a marked image pays
for the exact answer:
- a short PNG leaves its last row as allocated, all zero bytes: then the stream is inflated
  and counted (interlaced images are always counted, their last row is not the last written);
- a short JPEG scan leaves its last blocks mid-grey: then the image is decoded again with
  filler bytes before the end of every entropy-coded segment. Bytes after a complete segment
  are skipped, so the pixels stay the same; bytes after a short one are decoded as data, so
  they change. Progressive files and files with restart intervals can be short anywhere, so
  they are always decoded twice; missing restart intervals show in the structure itself.
"""

from __future__ import annotations

import hashlib
from typing import Final

from PIL import Image

_FILLER: Final = hashlib.shake_128(b"visiongate scan filler").digest(256).replace(b"\xff", b"\xfe")
"""Bytes that decode as arbitrary Huffman codes; no 0xFF, so they never read as a marker."""
_MID_GREY: Final = 128
_COMPARE_ROWS: Final = 64


def last_row_blank(image: Image.Image) -> bool:
    """Whether the last row is all zero bytes, as Pillow leaves a row no data reached."""
    if image.info.get("interlace"):
        return True
    row = image.crop((0, image.height - 1, image.width, image.height)).tobytes()
    return not row.strip(b"\x00")


def ends_mid_grey(image: Image.Image) -> bool:
    """Whether the last pixel is what libjpeg writes for a block it had no data for."""
    if image.mode not in ("L", "RGB"):
        return True  # CMYK and the like: too rare to be worth a cheaper test
    pixel = image.getpixel((image.width - 1, image.height - 1))
    values = pixel if isinstance(pixel, tuple) else (pixel,)
    return all(value == _MID_GREY for value in values)


def with_filler(data: bytes, ends: tuple[int, ...]) -> bytes:
    """`data` with filler bytes inserted at each of `ends` (offsets in ascending order)."""
    pieces: list[bytes] = []
    previous = 0
    for end in ends:
        pieces += [data[previous:end], _FILLER]
        previous = end
    pieces.append(data[previous:])
    return b"".join(pieces)


def same_pixels(first: Image.Image, second: Image.Image) -> bool:
    """Whether two images are identical, compared a band of rows at a time (no full copy)."""
    if first.size != second.size or first.mode != second.mode:
        return False
    for top in range(0, first.height, _COMPARE_ROWS):
        box = (0, top, first.width, min(first.height, top + _COMPARE_ROWS))
        if first.crop(box).tobytes() != second.crop(box).tobytes():
            return False
    return True
