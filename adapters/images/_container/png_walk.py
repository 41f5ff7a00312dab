"""The walk of a PNG's chunks: what is not needed to show the image, and whether the zlib
stream holds the pixel data the header declares (`png_pixel_data`)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from .found import Layout, after_end, ceil_div, unique
from .repair import PNG_SIGNATURE

PNG_DISPLAY_CHUNKS: Final = frozenset(
    {
        *(b"IHDR", b"PLTE", b"IDAT", b"IEND"),
        *(b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"sBIT", b"pHYs", b"bKGD"),
    }
)
"""Chunks that say how to show the pixels and carry no free text."""
_CHANNELS: Final = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_DEPTHS: Final = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
"""Bit depths the PNG specification allows for each colour type."""
_FILTER_TYPES: Final = bytes(range(5))
_ADAM7: Final = (
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
)
"""Adam7 passes: first column, first row, column step, row step."""
_INFLATE_STEP: Final = 1 << 20
"""Bytes inflated at a time while counting: memory stays bounded whatever the image size."""


def png_chunks(data: bytes) -> Iterator[tuple[bytes, int, int]]:
    """(type, start of body, end of chunk) for each whole chunk, up to and including IEND."""
    position = len(PNG_SIGNATURE)
    while position + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, position)
        end = position + 12 + length
        yield kind, position + 8, end
        if kind == b"IEND" or end > len(data):
            return
        position = end


def png_layout(data: bytes) -> Layout:
    extras: list[str] = []
    end = len(PNG_SIGNATURE)
    for kind, _, chunk_end in png_chunks(data):
        end = chunk_end
        if kind not in PNG_DISPLAY_CHUNKS:
            extras.append(f"png `{chunk_name(kind)}` chunk")
    return Layout(unique(extras + after_end(data, end)))


def chunk_name(kind: bytes) -> str:
    return kind.decode("ascii") if kind.isalpha() else "unknown"


@dataclass(frozen=True)
class PixelData:
    """How much pixel data a PNG's zlib stream holds against what its header declares."""

    declared: int
    """Filtered bytes the header implies (rows times filter byte plus row bytes, per pass)."""
    found: int
    """Bytes the stream inflates to, counted up to one past `declared`."""
    exact: bool
    """The stream ends cleanly exactly there, with no data after it."""
    filters_valid: bool = False
    """Every row starts with one of the five filter types (checked only without interlacing:
    an interlaced image's rows are of seven widths)."""

    @property
    def short(self) -> bool:
        """Rows are missing: Pillow would leave them black."""
        return self.found < self.declared


def png_pixel_data(data: bytes) -> PixelData | None:
    """Inflate the IDAT stream and count it; None when the header cannot be read."""
    chunks = list(png_chunks(data))
    if not chunks or chunks[0][0] != b"IHDR" or chunks[0][2] - chunks[0][1] != 17:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack_from(
        ">IIBBBBB", data, chunks[0][1]
    )
    if depth not in _DEPTHS.get(colour, ()):
        return None
    bits = depth * _CHANNELS[colour]
    declared = _declared_bytes(width, height, bits, interlace == 1)
    stride = 0 if interlace else 1 + (width * bits + 7) // 8
    view = memoryview(data)
    idat = [view[start : end - 4] for kind, start, end in chunks if kind == b"IDAT"]
    found, clean, filters = _inflated_length(idat, declared, stride)
    return PixelData(declared, found, clean and found == declared, filters and stride > 0)


def _declared_bytes(width: int, height: int, bits: int, interlaced: bool) -> int:
    if not interlaced:
        return height * (1 + (width * bits + 7) // 8)
    total = 0
    for x0, y0, dx, dy in _ADAM7:
        columns, rows = ceil_div(max(0, width - x0), dx), ceil_div(max(0, height - y0), dy)
        if columns and rows:
            total += rows * (1 + (columns * bits + 7) // 8)
    return total


def _inflated_length(
    chunks: list[memoryview], declared: int, stride: int
) -> tuple[int, bool, bool]:
    """Bytes inflated (counting stops past `declared`), whether the stream ended cleanly, and
    whether every `stride`-th byte (a row's filter type, when `stride`) is a valid one."""
    stream = zlib.decompressobj()
    found = 0
    filters = True
    try:
        for chunk in chunks:
            pending: bytes | memoryview = chunk
            while pending and found <= declared:
                piece = stream.decompress(pending, _INFLATE_STEP)
                if stride:
                    filters = filters and not piece[-found % stride :: stride].translate(
                        None, _FILTER_TYPES
                    )
                found += len(piece)
                pending = stream.unconsumed_tail
            if found > declared:
                return found, False, filters
    except zlib.error:
        return found, False, filters
    return found, stream.eof and not stream.unused_data, filters
