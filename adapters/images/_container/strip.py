"""Remove metadata from an image's container without touching its encoded pixels.

Comments, text chunks, EXIF, XMP, timestamps, thumbnails and colour profiles sit in segments
(JPEG), chunks (PNG, WebP) and extension blocks (GIF) of their own: a decoder skips them, so
they can be dropped whole and the image decodes to the same pixels. That keeps a small photo
byte for byte what the camera or server encoded, instead of decoding and encoding it again
(which costs detail and, for a JPEG, usually bytes) only to leave its text behind.

Kept: what a decoder reads to show the pixels (JPEG's tables, frame, scans, JFIF without its
thumbnail and Adobe's colour transform; PNG's critical chunks and `tRNS`, `gAMA`, `cHRM`,
`sRGB`, `sBIT`, `pHYs`, `bKGD`; WebP's frame chunks; GIF's graphic control and loop
extensions). Dropped: everything else, colour profiles included; whether the image may then
be sent without its profile (none, or one that draws the same colours as sRGB) and without
its EXIF (upright already) is for the caller to decide from the header. Not repaired: what
would change what a decoder sees. Data after the end of the image, a second image, an
animation, an unknown critical chunk or marker are `blockers`: such an image is re-encoded
from its pixels instead.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from .jpeg_walk import JFIF_WITHOUT_THUMBNAIL, SCAN_END
from .png_walk import PNG_DISPLAY_CHUNKS, chunk_name, png_chunks
from .repair import PNG_SIGNATURE
from .structure import GIF_LOOPS, WEBP_DISPLAY_CHUNKS, gif_colour_table, skip_gif_sub_blocks


@dataclass(frozen=True)
class Cleaned:
    """The image without its metadata, what was removed, and what stops it being sent as is."""

    data: bytes
    removed: tuple[str, ...] = ()
    """Names of what was dropped, in file order, each once (`jpeg comment`, `exif`, ...)."""
    blockers: tuple[str, ...] = ()
    """Why these bytes cannot be sent as the image even without metadata; empty: they can."""


def strip_metadata(data: bytes, media_type: str) -> Cleaned:
    """`data` as `media_type` without metadata; formats never passed through are returned as
    they are, with a blocker."""
    strip = _STRIPS.get(media_type)
    if strip is None:
        return Cleaned(data, blockers=(f"`{media_type}` is never sent as it is",))
    return strip(data)


class _Rebuild:
    """Pieces of the input kept in order (as views: no copy until the end), and notes."""

    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self._data = data
        self._pieces: list[memoryview | bytes] = []
        self._removed: list[str] = []
        self._blockers: list[str] = []
        self._changed = False

    def keep(self, start: int, end: int) -> None:
        self._pieces.append(self._view[start:end])

    def add(self, piece: bytes) -> None:
        self._pieces.append(piece)
        self._changed = True

    def drop(self, name: str) -> None:
        self._removed.append(name)
        self._changed = True

    def block(self, reason: str) -> None:
        self._blockers.append(reason)

    def result(self) -> Cleaned:
        removed = tuple(dict.fromkeys(self._removed))
        blockers = tuple(dict.fromkeys(self._blockers))
        if blockers or not self._changed:
            return Cleaned(self._data, removed if not blockers else (), blockers)
        return Cleaned(b"".join(self._pieces), removed)


def _trailing(out: _Rebuild, data: bytes, end: int) -> None:
    if end > len(data):
        out.block("the image structure is cut short")
    elif end < len(data):
        out.block(f"{len(data) - end} bytes after the end of the image")


# --- PNG -------------------------------------------------------------------------------------

_ANIMATION_CHUNKS: Final = frozenset({b"acTL", b"fcTL", b"fdAT"})


def _png(data: bytes) -> Cleaned:
    out = _Rebuild(data)
    out.keep(0, len(PNG_SIGNATURE))
    end = len(PNG_SIGNATURE)
    kind = b""
    for kind, _, chunk_end in png_chunks(data):
        start, end = end, chunk_end
        if kind in PNG_DISPLAY_CHUNKS and _crc_ok(data, start, chunk_end):
            out.keep(start, chunk_end)
        elif kind in _ANIMATION_CHUNKS:
            out.keep(start, chunk_end)
            out.block("an animated png")
        elif not kind[0] & 0x20:
            out.block(f"a critical png `{chunk_name(kind)}` chunk")  # or a corrupt one
        elif not _crc_ok(data, start, chunk_end):
            out.drop(f"corrupt png `{chunk_name(kind)}` chunk")
        else:
            out.drop(f"png `{chunk_name(kind)}` chunk")
    if kind != b"IEND":
        out.block("the image structure is cut short")
    _trailing(out, data, end)
    return out.result()


def _crc_ok(data: bytes, start: int, end: int) -> bool:
    if end > len(data):
        return False
    view = memoryview(data)
    return zlib.crc32(view[start + 4 : end - 4]) == int.from_bytes(view[end - 4 : end], "big")


# --- JPEG ------------------------------------------------------------------------------------

_COM: Final = 0xFE
_APP0: Final = 0xE0
_APP14: Final = 0xEE
_APPS: Final = frozenset(range(0xE0, 0xF0))
_SOS: Final = 0xDA
_EOI: Final = 0xD9
_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD8)})
_FRAMES: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_DECODING: Final = frozenset({0xC4, 0xCC, 0xDB, 0xDD})
"""Tables and the restart interval (DHT, DAC, DQT, DRI): what the scans are decoded with."""
_APP_NAMES: Final = (
    (0xE1, b"Exif\x00", "exif"),
    (0xE1, b"http://ns.adobe.com/xap/1.0/", "xmp"),
    (0xE2, b"ICC_PROFILE\x00", "icc profile"),
    (0xED, b"Photoshop 3.0\x00", "photoshop resources"),
    (0xE0, b"JFXX\x00", "jfif thumbnail"),
)


@dataclass(frozen=True)
class _Segment:
    marker: int
    start: int
    """Offset of the marker's 0xFF."""
    end: int
    """Offset past the segment and, for a scan, past its entropy-coded data."""


def _jpeg(data: bytes) -> Cleaned:
    out = _Rebuild(data)
    out.keep(0, 2)
    frames = 0
    end = len(data) + 1
    for segment in _jpeg_segments(data, out):
        if segment.marker == _EOI:
            out.keep(segment.start, segment.end)
            end = segment.end
            break
        frames += segment.marker in _FRAMES
        _jpeg_segment(data, segment, out)
    if frames != 1:
        out.block(f"{frames} jpeg frames")
    _trailing(out, data, end)
    return out.result()


def _jpeg_segment(data: bytes, segment: _Segment, out: _Rebuild) -> None:
    marker, start, end = segment.marker, segment.start, segment.end
    body = data[start + 4 : min(end, start + 4 + 32)]  # enough to name it
    if marker in _FRAMES or marker in _DECODING or marker == _SOS or marker in _STANDALONE:
        out.keep(start, end)
    elif marker == _APP0 and body.startswith(b"JFIF\x00"):
        _jfif(data, start, end, out)
    elif marker == _APP14 and body.startswith(b"Adobe"):
        out.keep(start, end)  # the colour transform: YCbCr or not, CMYK or YCCK
    elif marker in _APPS:
        out.drop(_app_name(marker, body))
    elif marker == _COM:
        out.drop("jpeg comment")
    else:
        out.keep(start, end)
        out.block(f"jpeg marker {marker:#04x}")


def _jfif(data: bytes, start: int, end: int, out: _Rebuild) -> None:
    length = end - start - 2
    if length <= JFIF_WITHOUT_THUMBNAIL + 2:
        out.keep(start, end)
        return
    # The header without its thumbnail: same version, units and density, a 0x0 thumbnail.
    header = bytearray(data[start : start + 4 + JFIF_WITHOUT_THUMBNAIL])
    header[2:4] = (JFIF_WITHOUT_THUMBNAIL + 2).to_bytes(2, "big")
    header[-2:] = b"\x00\x00"
    out.add(bytes(header))
    out.drop("jfif thumbnail")


def _app_name(marker: int, body: bytes) -> str:
    for app, tag, name in _APP_NAMES:
        if marker == app and body.startswith(tag):
            return name
    return f"jpeg segment {marker:#04x}"


def _jpeg_segments(data: bytes, out: _Rebuild) -> Iterator[_Segment]:
    """Each segment from after SOI to EOI; a scan's segment runs to the end of its data."""
    position = 2
    while position + 2 <= len(data):
        if data[position] != 0xFF:
            out.block("bytes between jpeg segments")
            return
        marker = data[position + 1]
        if marker == 0xFF:  # fill bytes before a marker are dropped, as decoders skip them
            position += 1
            continue
        if marker in _STANDALONE or marker == _EOI:
            yield _Segment(marker, position, position + 2)
            position += 2
            continue
        if position + 4 > len(data):
            break
        end = position + 2 + int.from_bytes(data[position + 2 : position + 4], "big")
        if marker == _SOS:
            end = _scan_end(data, end)
        if end > len(data):
            break
        yield _Segment(marker, position, end)
        position = end
    out.block("the image structure is cut short")


def _scan_end(data: bytes, start: int) -> int:
    """Where a scan's entropy-coded data end: the first marker that is not a restart."""
    found = SCAN_END.search(data, start)
    return found.start() if found is not None else len(data)


# --- WebP ------------------------------------------------------------------------------------

_VP8X_METADATA: Final = 0x20 | 0x08 | 0x04
"""VP8X flags for an ICC profile, EXIF and XMP."""
_VP8X_ANIMATION: Final = 0x02


def _webp(data: bytes) -> Cleaned:
    out = _Rebuild(data)
    declared_end = int.from_bytes(data[4:8], "little") + 8
    position = 12
    while position + 8 <= min(declared_end, len(data)):
        kind = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        end = position + 8 + size + (size & 1)
        if kind == b"VP8X" and size >= 10 and data[position + 8] & _VP8X_METADATA:
            flags = data[position + 8] & ~_VP8X_METADATA & 0xFF
            out.add(data[position : position + 8] + bytes([flags]))
            out.keep(position + 9, min(end, len(data)))
        elif kind == b"ANIM":
            out.block("an animated webp")
        elif kind in WEBP_DISPLAY_CHUNKS:
            out.keep(position, min(end, len(data)))
        else:
            out.drop(f"webp `{chunk_name(kind.strip())}` chunk")
        position = end
    if position != declared_end:
        out.block("the riff size does not match its chunks")
    _trailing(out, data, declared_end)
    cleaned = out.result()
    if cleaned.blockers or cleaned.data is data:
        return cleaned
    # The chunks kept, under a RIFF header whose size counts them.
    body = cleaned.data
    return Cleaned(b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body, cleaned.removed)


# --- GIF -------------------------------------------------------------------------------------


def _gif(data: bytes) -> Cleaned:
    out = _Rebuild(data)
    start = 13 + gif_colour_table(data, 10)
    out.keep(0, start)
    position, frames = start, 0
    while position < len(data):
        block = data[position]
        if block == 0x3B:  # trailer
            out.keep(position, position + 1)
            if frames != 1:
                out.block(f"{frames} gif frames")
            _trailing(out, data, position + 1)
            return out.result()
        if block == 0x2C:
            frames += 1
            after_table = position + 10 + gif_colour_table(data, position + 9)
            end = skip_gif_sub_blocks(data, after_table + 1)
            out.keep(position, end)
        elif block == 0x21 and position + 1 < len(data):
            end = skip_gif_sub_blocks(data, position + 2)
            _gif_extension(data, position, end, out)
        else:
            break
        position = end
    out.block("the image structure is cut short")
    return out.result()


def _gif_extension(data: bytes, position: int, end: int, out: _Rebuild) -> None:
    label = data[position + 1]
    if label == 0xF9 or (label == 0xFF and data[position + 3 : position + 14] in GIF_LOOPS):
        out.keep(position, end)
    elif label == 0xFE:
        out.drop("gif comment")
    elif label == 0x01:
        out.drop("gif plain text")
    elif label == 0xFF:
        out.drop("gif application extension")
    else:
        out.drop(f"gif extension {label:#04x}")


_STRIPS: Final[dict[str, Callable[[bytes], Cleaned]]] = {
    "image/png": _png,
    "image/jpeg": _jpeg,
    "image/webp": _webp,
    "image/gif": _gif,
}
