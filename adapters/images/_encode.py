"""Encode a standard-mode image in one output format, flattening alpha where the format has none."""

from __future__ import annotations

import io
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


JPEG_444: Final = Codec("image/jpeg", lossy=True, subsampling="4:4:4")
"""Keeps colour edges and smooth gradients; used at high quality."""
JPEG_420: Final = Codec("image/jpeg", lossy=True, subsampling="4:2:0")
"""More detail per byte at middle qualities; used when WebP is not accepted."""
WEBP: Final = Codec("image/webp", lossy=True)
PNG: Final = Codec("image/png", lossy=False)
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
    return image


def flatten(image: Image.Image) -> Image.Image:
    """`image` composited on white when it has alpha; unchanged otherwise."""
    if image.mode not in ("LA", "RGBA"):
        return image
    mode = image.mode[:-1]
    background = Image.new(mode, image.size, 255 if mode == "L" else (255, 255, 255))
    background.paste(image.convert(mode), mask=image.getchannel("A"))
    return background


def encode(image: Image.Image, codec: Codec, quality: int | None, icc: bytes | None) -> bytes:
    """`image` (already `prepare`d for the codec) encoded; `icc` is kept when it fits the mode."""
    options: dict[str, object] = {}
    if codec.lossy:
        options["quality"] = quality
    if codec.subsampling is not None:
        options["subsampling"] = codec.subsampling
    if codec.media_type == "image/webp":
        options["method"] = _WEBP_METHOD
    if codec.media_type == "image/png":
        options["compress_level"] = _PNG_LEVEL
    if icc is not None and _icc_matches(image, codec, icc):
        options["icc_profile"] = icc
    # No free text from the source (JPEG and GIF writers copy `info["comment"]`): a GIF's
    # 1 MB comment made the JPEG writer raise `Comment is too long` (issue 13).
    options["comment"] = b""
    buffer = io.BytesIO()
    try:
        image.save(buffer, format=_PIL_FORMATS[codec.media_type], **options)
    except (ValueError, OSError) as error:
        # One image the encoder rejects is refused; it must not fail the whole result.
        raise Refusal(f"refused: the {codec.media_type} encoder failed ({error})") from error
    return buffer.getvalue()


def _icc_matches(image: Image.Image, codec: Codec, icc: bytes) -> bool:
    if codec.media_type == "image/gif":
        return False
    # WebP stores grey images as RGB, so only an RGB profile describes its pixels.
    color = image.mode in ("RGB", "RGBA") or codec.media_type == "image/webp"
    return icc[16:20] == (b"RGB " if color else b"GRAY")
