"""The walk of a JPEG's segments: metadata no decoder needs, data after the end of the image,
and where each entropy-coded segment ends (so `filled` can tell a short scan)."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Final

from .found import Layout, after_end, ceil_div, unique

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


def jpeg_layout(data: bytes) -> Layout:
    walk = _JpegWalk()
    end = _walk_jpeg(data, walk)
    if len(walk.frames) != 1:
        walk.extras.append(f"{len(walk.frames)} jpeg frames")
    sequential = len(walk.frames) == 1 and walk.frames[0] in _SEQUENTIAL_HUFFMAN
    return Layout(
        unique(walk.extras + after_end(data, end)),
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
        expected = ceil_div(_scan_mcus(header, walk), walk.interval)
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
        return ceil_div(width, 8 * most_h) * ceil_div(height, 8 * most_v)
    h, v = walk.sampling.get(header[1], (most_h, most_v))
    return ceil_div(ceil_div(width * h, most_h), 8) * ceil_div(ceil_div(height * v, most_v), 8)
