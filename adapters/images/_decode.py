"""Decode untrusted image bytes with bounded work: header checks first, every frame verified.

Truncation is detected by Pillow's loaders as long as `PIL.ImageFile.LOAD_TRUNCATED_IMAGES`
keeps its default (False); a process that turns it on would let partial images through.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from PIL import ExifTags, Image, UnidentifiedImageError

from ._sniff import DECODABLE
from ._types import Refusal

MAX_SOURCE_PIXELS: Final = 1 << 26
"""Pixels a header may declare (8192x8192, near Anthropic's 8000 px reject size); more is a bomb."""
MAX_FRAMES: Final = 256
"""Frames of an animation verified at most; more are refused rather than decoded."""
MAX_ANIMATION_PIXELS: Final = 1 << 27
"""Pixels decoded across all frames at most (frames x canvas)."""

_ANIMATED_FORMATS: Final = frozenset({"GIF", "PNG", "WEBP", "TIFF"})

# Pillow's plugins report malformed input through all of these; each becomes a refusal.
_DECODE_ERRORS: Final = (
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    struct.error,
    zlib.error,
    IndexError,
    KeyError,
    TypeError,
    ZeroDivisionError,
    OverflowError,
    RecursionError,
)


@dataclass(frozen=True)
class DecodedImage:
    """The first frame of a verified source, as loaded (possibly reduced by JPEG draft)."""

    image: Image.Image = field(repr=False)
    media_type: str
    source_width: int
    """Width in the file (before EXIF orientation)."""
    source_height: int
    frames: int
    orientation: int
    """EXIF orientation, 1 when upright."""
    complete: bool
    """The byte stream ends where its format says it should (no missing trailer)."""
    icc_profile: bytes | None = field(repr=False)

    @property
    def transposed(self) -> bool:
        """Whether orientation swaps width and height."""
        return self.orientation in (5, 6, 7, 8)

    @property
    def width(self) -> int:
        """Width as displayed."""
        return self.source_height if self.transposed else self.source_width

    @property
    def height(self) -> int:
        """Height as displayed."""
        return self.source_width if self.transposed else self.source_height


def fitted_size(width: int, height: int, max_edge: int) -> tuple[int, int]:
    """The size within `max_edge` on the long edge, same aspect, never upscaled."""
    scale = min(1.0, max_edge / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def decode(data: bytes, media_type: str, max_edge: int) -> DecodedImage:
    """Open, bound and fully decode `data`; raise `Refusal` when it is unsafe or broken.

    JPEG sources are drafted (DCT-scaled by libjpeg) toward the size that fits `max_edge`.
    """
    with _decoding(media_type):
        if media_type == "image/png":
            Image.open(io.BytesIO(data), formats=["PNG"]).verify()
        image = Image.open(io.BytesIO(data), formats=[DECODABLE[media_type]])
        width, height = image.size
        _check_pixels(width, height)
        # Asked before load: for GIF, Pillow answers by rewinding, which drops a loaded frame.
        animated = image.format in _ANIMATED_FORMATS and bool(getattr(image, "is_animated", False))
        _check_frames(_declared_frames(image), width * height)
        if image.format in ("JPEG", "MPO"):
            image.draft(None, fitted_size(width, height, max_edge))
        image.load()
        orientation = _orientation(image)
        icc_profile = _icc_profile(image)
        first, frames = _first_frame(image, width * height) if animated else (image, 1)
    return DecodedImage(
        image=first,
        media_type=media_type,
        source_width=width,
        source_height=height,
        frames=frames,
        orientation=orientation,
        complete=_complete_stream(data, media_type),
        icc_profile=icc_profile,
    )


@contextmanager
def _decoding(media_type: str) -> Iterator[None]:
    kind = media_type.removeprefix("image/")
    try:
        yield
    except Image.DecompressionBombError as error:
        raise Refusal(
            f"refused: {kind} header declares too many pixels to decode safely"
        ) from error
    except _DECODE_ERRORS as error:
        raise Refusal(
            f"refused: {kind} image is truncated or corrupt ({_detail(error)})"
        ) from error


def _detail(error: BaseException) -> str:
    if isinstance(error, UnidentifiedImageError):
        return "cannot be identified"
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text.lower().rstrip(".")[:100]


def _check_pixels(width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise Refusal(f"refused: image header declares an empty {width}x{height} canvas")
    if width * height > MAX_SOURCE_PIXELS:
        limit = MAX_SOURCE_PIXELS / 1e6
        raise Refusal(
            f"refused: {width}x{height} image exceeds the {limit:.0f}-megapixel decode limit"
        )


def _declared_frames(image: Image.Image) -> int:
    # PNG (acTL) and WebP declare their frame count in the header; GIF and TIFF are counted
    # while verifying, because Pillow would walk the whole file to count them.
    if image.format in ("PNG", "WEBP"):
        return int(getattr(image, "n_frames", 1))
    return 1


def _check_frames(frames: int, canvas_pixels: int) -> None:
    if frames > MAX_FRAMES:
        raise Refusal(f"refused: animation has more than {MAX_FRAMES} frames")
    if frames * canvas_pixels > MAX_ANIMATION_PIXELS:
        limit = MAX_ANIMATION_PIXELS / 1e6
        raise Refusal(f"refused: animation exceeds {limit:.0f} megapixels across its frames")


def _first_frame(image: Image.Image, canvas_pixels: int) -> tuple[Image.Image, int]:
    """Keep frame 0 and decode every later frame, so a broken one refuses the whole file."""
    first = image.copy()
    frames = 1
    while _next_frame(image, frames):
        frames += 1
        _check_frames(frames, canvas_pixels)
        image.load()
    return first, frames


def _next_frame(image: Image.Image, index: int) -> bool:
    try:
        image.seek(index)
    except EOFError:
        return False
    return True


def _orientation(image: Image.Image) -> int:
    value = image.getexif().get(ExifTags.Base.Orientation, 1)
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def _icc_profile(image: Image.Image) -> bytes | None:
    profile = image.info.get("icc_profile")
    return profile if isinstance(profile, bytes) and len(profile) >= 128 else None


def _complete_stream(data: bytes, media_type: str) -> bool:
    """Whether the format's trailer is present, so a strict decoder will accept the bytes as is."""
    if media_type == "image/jpeg":
        return data.rstrip(b"\x00").endswith(b"\xff\xd9")
    if media_type == "image/gif":
        return data.rstrip(b"\x00").endswith(b";")
    if media_type == "image/webp":
        declared = int.from_bytes(data[4:8], "little") + 8
        return declared in (len(data), len(data) - 1)
    # A PNG passed verify(), which reads every chunk through IEND and checks each CRC.
    return media_type == "image/png"
