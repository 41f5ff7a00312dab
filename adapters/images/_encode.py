"""Encode a standard-mode image in one output format, flattening alpha where the format has none.

Nothing but pixels is written: no comment, EXIF, XMP, text chunk or colour profile (pixels are
converted to sRGB before they get here). Pillow's writers copy some of these from the image's
`info` (a GIF's 1 MB comment made the JPEG writer raise `Comment is too long`), so the
image is encoded without its `info`, and an encoder that fails refuses the image instead of
failing the call.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from typing import Final

from PIL import Image

from ._types import Refusal


@dataclass(frozen=True)
class Codec:
    """An output format with its fixed encoder settings; quality is chosen per image."""

    media_type: str
    lossy: bool
    subsampling: str | None = None
    colours: int | None = None
    """A palette of this many colours (quantized, alpha flattened); None: the pixels as they are."""


JPEG_444: Final = Codec("image/jpeg", lossy=True, subsampling="4:4:4")
"""Keeps colour edges and smooth gradients; used at high quality."""
JPEG_420: Final = Codec("image/jpeg", lossy=True, subsampling="4:2:0")
"""More detail per byte at middle qualities; used when WebP is not accepted."""
WEBP: Final = Codec("image/webp", lossy=True)
PNG: Final = Codec("image/png", lossy=False)
PNG_PALETTE: Final = Codec("image/png", lossy=False, colours=8)
"""Text in eight grey levels: what dense text is sent as when no lossy floor fits (`_fitting`)."""
GIF: Final = Codec("image/gif", lossy=False)

MAX_EDGES: Final = {
    "image/webp": 16383,
    "image/jpeg": 65500,
    "image/png": 1 << 31,
    "image/gif": 65535,
}
"""Largest side each format can store; a target's ceiling may be set above WebP's."""

_PIL_FORMATS: Final = {
    "image/jpeg": "JPEG",
    "image/webp": "WEBP",
    "image/png": "PNG",
    "image/gif": "GIF",
}
# WebP's fastest method: the others cost 3-4x the time for about 10% fewer bytes.
_WEBP_METHOD: Final = 0
_PNG_LEVEL: Final = 6


def prepare(image: Image.Image, codec: Codec) -> Image.Image:
    """`image` in a mode the codec writes: no alpha for JPEG, a palette for GIF."""
    if codec.media_type == "image/jpeg":
        return flatten(image)
    if codec.media_type == "image/gif":
        flat = flatten(image)
        return flat if flat.mode == "L" else flat.quantize(256, Image.Quantize.FASTOCTREE)
    if codec.colours is not None:
        return flatten(image).quantize(codec.colours, Image.Quantize.FASTOCTREE)
    return image


def flatten(image: Image.Image) -> Image.Image:
    """`image` composited on white when it has alpha; unchanged otherwise."""
    if image.mode not in ("LA", "RGBA"):
        return image
    mode = image.mode[:-1]
    background = Image.new(mode, image.size, 255 if mode == "L" else (255, 255, 255))
    background.paste(image.convert(mode), mask=image.getchannel("A"))
    return background


def encode(image: Image.Image, codec: Codec, quality: int | None) -> bytes:
    """`image` (already `prepare`d for the codec) encoded with nothing but its pixels."""
    options: dict[str, object] = {}
    if codec.lossy:
        options["quality"] = quality
    if codec.subsampling is not None:
        options["subsampling"] = codec.subsampling
    if codec.media_type == "image/webp":
        options["method"] = _WEBP_METHOD
    if codec.media_type == "image/png":
        options["compress_level"] = _PNG_LEVEL
    buffer = io.BytesIO()
    try:
        _without_metadata(image).save(buffer, format=_PIL_FORMATS[codec.media_type], **options)
    except _ENCODE_ERRORS as error:
        kind = codec.media_type.removeprefix("image/")
        raise Refusal(f"refused: the {kind} encoder failed ({_reason(error)})") from error
    return buffer.getvalue()


# What Pillow's writers raise on pixels or settings they cannot write; each refuses the image.
_ENCODE_ERRORS: Final = (OSError, ValueError, TypeError, KeyError, struct.error, zlib.error)


def _without_metadata(image: Image.Image) -> Image.Image:
    """`image` sharing its pixels, with an empty `info` (no comment, profile, EXIF, ...)."""
    if not image.info:
        return image
    bare = image._new(image.im)
    bare.info = {}
    return bare


def _reason(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__).lower().rstrip(".")[:100]
