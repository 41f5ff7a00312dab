"""Where an image's bytes end and what they carry besides the pixels, read from the container.

Passing bytes through promises the provider exactly one well-formed image and nothing else, so
the container is walked before the pixels are trusted: data after the end of the image (HTML
or a ZIP appended to a PNG makes a polyglot), a second image, and metadata that no decoder
needs to show the pixels (comments, text chunks, EXIF, XMP, colour profiles, unknown chunks)
are all reported as extras. Any extra sends the image to be re-encoded from its pixels, which
writes none of them. The walk also finds what tells whether the pixel data fill the size
the header declares, which Pillow does not check (see `filled`): a PNG's zlib stream is
inflated and counted, a JPEG's entropy-coded segments are located.

The walks of PNG (`png_walk`) and JPEG (`jpeg_walk`) have their own modules; GIF's and WebP's
are here.
"""

from __future__ import annotations

from typing import Final

from .found import Layout, after_end, unique
from .jpeg_walk import jpeg_layout
from .png_walk import chunk_name, png_layout

__all__ = [
    "GIF_LOOPS",
    "WEBP_DISPLAY_CHUNKS",
    "Layout",
    "gif_colour_table",
    "layout",
    "skip_gif_sub_blocks",
]


def layout(data: bytes, media_type: str) -> Layout:
    """The walk of `data` as `media_type`; formats this stage never passes through are bare."""
    walk = _WALKS.get(media_type)
    return walk(data) if walk is not None else Layout()


# --- GIF -------------------------------------------------------------------------------------

GIF_LOOPS: Final = (b"NETSCAPE2.0", b"ANIMEXTS1.0")
"""Application extensions that only say how often an animation loops."""


def _gif(data: bytes) -> Layout:
    extras: list[str] = []
    position = 13 + gif_colour_table(data, 10)
    while position < len(data):
        block = data[position]
        if block == 0x3B:  # trailer
            return Layout(unique(extras + after_end(data, position + 1)))
        if block == 0x2C:
            position = skip_gif_sub_blocks(
                data, position + 10 + gif_colour_table(data, position + 9) + 1
            )
        elif block == 0x21 and position + 1 < len(data):
            position = _gif_extension(data, position, extras)
        else:
            break
    return Layout(unique([*extras, "the image structure is cut short"]))


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
    extras = after_end(data, declared_end)
    position = 12
    while position + 8 <= min(declared_end, len(data)):
        kind = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        if kind not in WEBP_DISPLAY_CHUNKS:
            extras.append(f"webp `{chunk_name(kind.strip())}` chunk")
        position += 8 + size + (size & 1)
    return Layout(unique(extras))


_WALKS: Final = {
    "image/png": png_layout,
    "image/jpeg": jpeg_layout,
    "image/gif": _gif,
    "image/webp": _webp,
}
