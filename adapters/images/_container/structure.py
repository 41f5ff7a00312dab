"""Where an image's bytes end and what they carry besides the pixels, read from the container.

Passing bytes through promises the provider exactly one well-formed image and nothing else, so
the container is walked before the pixels are trusted: data after the end of the image (HTML
or a ZIP appended to a PNG makes a polyglot), a second image, and metadata that no decoder
needs to show the pixels (comments, text chunks, EXIF, XMP, colour profiles, unknown chunks)
are all reported as extras. Any extra sends the image to be re-encoded from its pixels, which
writes none of them. The walk also finds what tells whether the pixel data fill the size
the header declares, which Pillow does not check (see `filled`): a PNG's zlib stream is
inflated and counted here, a JPEG's entropy-coded segments are located here.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from .repair import PNG_SIGNATURE


@dataclass(frozen=True)
class Layout:
    """What a walk of the container found besides one image's pixels."""

    extras: tuple[str, ...] = ()
    """Everything that is not needed to show one image, e.g. `12 bytes after the image`."""
    entropy_ends: tuple[int, ...] = ()
    """JPEG: offsets where each entropy-coded segment (a scan or a restart interval) ends."""
    verify_scans: bool = True
    """JPEG: whether a short scan could hide anywhere (progressive, restart intervals, ...)
    rather than only at the end of the image."""
    short: bool = False
    """The structure alone shows that pixel data are missing (JPEG restart intervals)."""

    @property
    def bare(self) -> bool:
        """Whether the bytes hold exactly one image and nothing else."""
        return not self.extras


def layout(data: bytes, media_type: str) -> Layout:
    """The walk of `data` as `media_type`; formats this stage never passes through are bare."""
    walk = _WALKS.get(media_type)
    return walk(data) if walk is not None else Layout()


def _unique(extras: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(extras))


def _after_end(data: bytes, end: int) -> list[str]:
    if end > len(data):
        return ["the image structure is cut short"]
    return [f"{len(data) - end} bytes after the end of the image"] if end < len(data) else []


# --- PNG -------------------------------------------------------------------------------------

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


def _png(data: bytes) -> Layout:
    extras: list[str] = []
    end = len(PNG_SIGNATURE)
    for kind, _, chunk_end in png_chunks(data):
        end = chunk_end
        if kind not in PNG_DISPLAY_CHUNKS:
            extras.append(f"png `{chunk_name(kind)}` chunk")
    return Layout(_unique(extras + _after_end(data, end)))


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
        columns, rows = _ceil(max(0, width - x0), dx), _ceil(max(0, height - y0), dy)
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


# --- JPEG ------------------------------------------------------------------------------------

_EOI: Final = 0xD9
_SOS: Final = 0xDA
_DRI: Final = 0xDD
_COM: Final = 0xFE
_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD8)})
_FRAMES: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers, every coding process (DHT, JPG and DAC share the range)."""
_SEQUENTIAL_HUFFMAN: Final = frozenset({0xC0, 0xC1})
_TABLES: Final = frozenset({0xC4, 0xCC, 0xDB, 0xDC})
_DISPLAY_APPS: Final = {0xE0: (b"JFIF\x00",), 0xEE: (b"Adobe",)}
"""Application segments a decoder reads to show the pixels: JFIF and Adobe's colour transform."""
JFIF_WITHOUT_THUMBNAIL: Final = 14
_NAMED_APPS: Final = {
    (0xE1, b"Exif\x00"): "exif",
    (0xE1, b"http://ns.adobe.com/xap/1.0/\x00"): "xmp",
    (0xE2, b"ICC_PROFILE\x00"): "icc profile",
}
SCAN_END: Final = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
"""The first marker that ends entropy-coded data (stuffed zeros and restarts do not)."""
_RESTART: Final = re.compile(rb"\xff[\xd0-\xd7]")


@dataclass
class _JpegWalk:
    """What the segment walk has seen so far."""

    extras: list[str] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    frames: list[int] = field(default_factory=list)
    size: tuple[int, int] = (0, 0)
    sampling: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Component id -> (horizontal, vertical) sampling factors, from the frame header."""
    interval: int = 0
    """MCUs per restart interval (0: no restart markers)."""
    restarts: bool = False
    missing_intervals: bool = False


def _jpeg(data: bytes) -> Layout:
    walk = _JpegWalk()
    end = _walk_jpeg(data, walk)
    if len(walk.frames) != 1:
        walk.extras.append(f"{len(walk.frames)} jpeg frames")
    sequential = len(walk.frames) == 1 and walk.frames[0] in _SEQUENTIAL_HUFFMAN
    return Layout(
        _unique(walk.extras + _after_end(data, end)),
        entropy_ends=tuple(walk.ends),
        verify_scans=walk.restarts or not sequential,
        short=walk.missing_intervals,
    )


def _walk_jpeg(data: bytes, walk: _JpegWalk) -> int:
    """Walk the segments from SOI to EOI; the offset past EOI (past the data if cut short)."""
    position = 2
    while position + 2 <= len(data):
        if data[position] != 0xFF:
            walk.extras.append("bytes between jpeg segments")
            return len(data) + 1
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte before a marker
            position += 1
            continue
        if marker == _EOI:
            return position + 2
        if marker in _STANDALONE:
            position += 2
            continue
        position = _segment(data, position, marker, walk)
    return len(data) + 1


def _segment(data: bytes, position: int, marker: int, walk: _JpegWalk) -> int:
    if position + 4 > len(data):
        return len(data) + 1
    length = int.from_bytes(data[position + 2 : position + 4], "big")
    body = data[position + 4 : position + 2 + length]
    end = position + 2 + length
    if marker in _FRAMES:
        _frame(body, marker, walk)
    elif marker == _DRI and len(body) >= 2:
        walk.interval = int.from_bytes(body[:2], "big")
        walk.restarts = walk.restarts or walk.interval > 0
    elif marker == _SOS:
        return _scan(data, end, body, walk)
    elif marker not in _TABLES:
        _metadata(marker, body, walk.extras)
    return end


def _frame(body: bytes, marker: int, walk: _JpegWalk) -> None:
    walk.frames.append(marker)
    if len(body) < 6:
        return
    height, width, count = struct.unpack_from(">HHB", body, 1)
    walk.size = (width, height)
    for index in range(count):
        at = 6 + 3 * index
        if at + 2 <= len(body):
            walk.sampling[body[at]] = (body[at + 1] >> 4, body[at + 1] & 0x0F)


def _metadata(marker: int, body: bytes, extras: list[str]) -> None:
    if marker == _COM:
        extras.append("jpeg comment")
        return
    if any(body.startswith(tag) for tag in _DISPLAY_APPS.get(marker, ())):
        if body.startswith(b"JFIF") and len(body) > JFIF_WITHOUT_THUMBNAIL:
            extras.append("jfif thumbnail")
        return
    named = (
        name for (app, tag), name in _NAMED_APPS.items() if app == marker and body.startswith(tag)
    )
    extras.append(next(named, None) or f"jpeg segment {marker:#04x}")


def _scan(data: bytes, start: int, header: bytes, walk: _JpegWalk) -> int:
    """Skip one scan's entropy-coded data; note where each of its segments ends."""
    found = SCAN_END.search(data, start)
    end = found.start() if found is not None else len(data)
    while end > start and data[end - 1] == 0xFF:
        end -= 1  # fill bytes belong to the marker, not to the scan
    restarts = [match.start() for match in _RESTART.finditer(data, start, end)]
    walk.ends.extend([*restarts, end])
    if walk.interval:
        # Each interval decodes whole, so a scan cut at an interval boundary decodes without
        # a short segment: count the intervals against the MCUs the frame header implies.
        expected = _ceil(_scan_mcus(header, walk), walk.interval)
        walk.missing_intervals = walk.missing_intervals or len(restarts) + 1 < expected
        if len(restarts) + 1 > expected:
            walk.extras.append("jpeg scan data after the last block")
    return end


def _scan_mcus(header: bytes, walk: _JpegWalk) -> int:
    """MCUs in a scan: whole-frame MCUs when interleaved, one component's blocks otherwise."""
    width, height = walk.size
    most_h = max((h for h, _ in walk.sampling.values()), default=1) or 1
    most_v = max((v for _, v in walk.sampling.values()), default=1) or 1
    if header[:1] != b"\x01" or len(header) < 2:
        return _ceil(width, 8 * most_h) * _ceil(height, 8 * most_v)
    h, v = walk.sampling.get(header[1], (most_h, most_v))
    return _ceil(_ceil(width * h, most_h), 8) * _ceil(_ceil(height * v, most_v), 8)


def _ceil(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


# --- GIF -------------------------------------------------------------------------------------

GIF_LOOPS: Final = (b"NETSCAPE2.0", b"ANIMEXTS1.0")
"""Application extensions that only say how often an animation loops."""


def _gif(data: bytes) -> Layout:
    extras: list[str] = []
    position = 13 + gif_colour_table(data, 10)
    while position < len(data):
        block = data[position]
        if block == 0x3B:  # trailer
            return Layout(_unique(extras + _after_end(data, position + 1)))
        if block == 0x2C:
            position = skip_gif_sub_blocks(
                data, position + 10 + gif_colour_table(data, position + 9) + 1
            )
        elif block == 0x21 and position + 1 < len(data):
            position = _gif_extension(data, position, extras)
        else:
            break
    return Layout(_unique([*extras, "the image structure is cut short"]))


def gif_colour_table(data: bytes, flags_at: int) -> int:
    flags = data[flags_at] if flags_at < len(data) else 0
    return 3 << ((flags & 0x07) + 1) if flags & 0x80 else 0


def skip_gif_sub_blocks(data: bytes, position: int) -> int:
    while position < len(data) and data[position]:
        position += 1 + data[position]
    return position + 1


def _gif_extension(data: bytes, position: int, extras: list[str]) -> int:
    label = data[position + 1]
    if label == 0xFE:
        extras.append("gif comment")
    elif label == 0x01:
        extras.append("gif plain text")
    elif label == 0xFF and data[position + 3 : position + 14] not in GIF_LOOPS:
        extras.append("gif application extension")
    elif label not in (0xF9, 0xFF):
        extras.append(f"gif extension {label:#04x}")
    return skip_gif_sub_blocks(data, position + 2)


# --- WebP ------------------------------------------------------------------------------------

WEBP_DISPLAY_CHUNKS: Final = frozenset({b"VP8 ", b"VP8L", b"VP8X", b"ALPH", b"ANIM", b"ANMF"})


def _webp(data: bytes) -> Layout:
    declared_end = int.from_bytes(data[4:8], "little") + 8
    extras = _after_end(data, declared_end)
    position = 12
    while position + 8 <= min(declared_end, len(data)):
        kind = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        if kind not in WEBP_DISPLAY_CHUNKS:
            extras.append(f"webp `{chunk_name(kind.strip())}` chunk")
        position += 8 + size + (size & 1)
    return Layout(_unique(extras))


_WALKS: Final = {
    "image/png": _png,
    "image/jpeg": _jpeg,
    "image/gif": _gif,
    "image/webp": _webp,
}
