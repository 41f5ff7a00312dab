"""Decode untrusted image bytes with bounded work: header checks first, every frame verified.

Truncation is detected by Pillow's loaders as long as `PIL.ImageFile.LOAD_TRUNCATED_IMAGES`
keeps its default (False); a process that turns it on would let partial images through.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import io
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import PIL
from PIL import ExifTags, Image, UnidentifiedImageError, _imaging

from ._container.filled import ends_mid_grey, last_row_blank, same_pixels, with_filler
from ._container.png_walk import png_pixel_data
from ._container.structure import Layout, layout
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
    """What a verified source is; its pixels are handed over apart, so they can be freed early."""

    media_type: str
    source_width: int
    """Width in the file (before EXIF orientation)."""
    source_height: int
    frames: int
    orientation: int
    """EXIF orientation, 1 when upright."""
    bare: bool
    """The bytes hold exactly one image and nothing else, so they may be passed through."""
    mode: str
    """Pillow's mode of the decoded frame."""
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


def decode(
    data: bytes, media_type: str, max_edge: int, *, exact: bool = False
) -> tuple[DecodedImage, Image.Image]:
    """Open, bound and fully decode `data`; raise `Refusal` when it is unsafe or broken.

    Returns the facts and the first frame. JPEG sources are drafted (DCT-scaled by libjpeg)
    toward the size that fits `max_edge`. Pixel data that end before the header's size is
    filled are refused. `exact` asks for every check a pass-through needs, even the costly
    ones (a PNG's zlib stream is then inflated and counted whatever its last row holds).
    """
    structure = layout(data, media_type)
    with decoding(media_type):
        if media_type == "image/png":
            Image.open(io.BytesIO(data), formats=["PNG"]).verify()
        image = Image.open(io.BytesIO(data), formats=[DECODABLE[media_type]])
        width, height = image.size
        check_pixels(width, height)
        # Asked before load: for GIF, Pillow answers by rewinding, which drops a loaded frame.
        animated = image.format in _ANIMATED_FORMATS and bool(getattr(image, "is_animated", False))
        _check_frames(_declared_frames(image), width * height)
        draft = fitted_size(width, height, max_edge)
        if image.format in ("JPEG", "MPO"):
            image.draft(None, draft)
        still = _still_webp(data, image)
        if still is None:
            image.load()
        # Both come from the header Pillow read when it opened the file, loaded or not.
        orientation = orientation_of(image)
        icc_profile = icc_profile_of(image)
        if still is not None:
            first, frames = still, 1
        elif animated:
            first, frames = _first_frame(image, width * height)
        else:
            first, frames = image, 1
        # Only an image within the ceiling can pass through: only then is the exact count due.
        exact = exact and max(width, height) <= max_edge
        bare_data = _check_filled(
            _Source(data, media_type, (width, height), draft), structure, first, exact=exact
        )
    facts = DecodedImage(
        media_type=media_type,
        source_width=width,
        source_height=height,
        frames=frames,
        orientation=orientation,
        bare=structure.bare and bare_data,
        mode=first.mode,
        icc_profile=icc_profile,
    )
    return facts, _detached(first)


@dataclass(frozen=True)
class _Source:
    data: bytes = field(repr=False)
    media_type: str
    size: tuple[int, int]
    """As the header declares it."""
    draft: tuple[int, int]
    """The size a JPEG was drafted toward."""


def _check_filled(source: _Source, structure: Layout, image: Image.Image, *, exact: bool) -> bool:
    """Refuse pixel data that end before the header's size is filled (see `_container.filled`).

    Returns whether the data were found to end exactly where the image does (a PNG's zlib
    stream is only counted when `exact` or when its last row looks unwritten).
    """
    if source.media_type == "image/png":
        if not exact and not last_row_blank(image):
            return False
        pixel_data = png_pixel_data(source.data)
        if pixel_data is not None and pixel_data.short:
            raise _unfilled("png pixel data", source.size)
        return pixel_data is not None and pixel_data.exact
    if source.media_type == "image/jpeg" and (
        structure.short
        or (
            (structure.verify_scans or ends_mid_grey(image))
            and not _same_with_filler(source, structure, image)
        )
    ):
        raise _unfilled("jpeg scan data", source.size)
    return True


def _same_with_filler(source: _Source, structure: Layout, image: Image.Image) -> bool:
    try:
        patched = io.BytesIO(with_filler(source.data, structure.entropy_ends))
        with Image.open(patched, formats=["JPEG"]) as again:
            again.draft(None, source.draft)
            again.load()
            return same_pixels(image, again)
    except _DECODE_ERRORS:
        return False  # the original decoded, so the filler made the difference


def _unfilled(what: str, size: tuple[int, int]) -> Refusal:
    return Refusal(
        f"refused: {what} ends before the image is filled ({size[0]}x{size[1]} declared)"
    )


# --- WebP through libwebp's simple API --------------------------------------------------------
#
# Pillow decodes WebP only through libwebp's animation decoder, which keeps two canvases and
# returns a third copy that Pillow copies once more: 4x the frame. A still image needs none of
# that: libwebp's simple API decodes it straight into a buffer Pillow then maps as the frame.


@dataclass(frozen=True)
class _LibWebP:
    path: str
    get_info: Callable[..., int]
    decode_rgba_into: Callable[..., int | None]


def decodes_directly(data: bytes, image: Image.Image) -> bool:
    """Whether `image` (opened from `data`) is a still WebP that libwebp can decode in place."""
    return _still(data, image) and libwebp() is not None


def _still(data: bytes, image: Image.Image) -> bool:
    return (
        image.format == "WEBP"
        and image.mode in ("RGB", "RGBA")
        and int(getattr(image, "n_frames", 1)) == 1
        # An animation of one frame is still a canvas to compose: Pillow's decoder does it.
        and not (data[12:16] == b"VP8X" and len(data) > 20 and data[20] & 0x02)
    )


_INT_P: Final = ctypes.POINTER(ctypes.c_int)


@functools.lru_cache(maxsize=1)
def libwebp() -> _LibWebP | None:
    """The libwebp Pillow's wheel carries, else the system's; None when neither loads."""
    for path in _libwebp_candidates():
        try:
            library = ctypes.CDLL(path)
            get_info = library.WebPGetInfo
            decode_into = library.WebPDecodeRGBAInto
        except (OSError, AttributeError):
            continue
        get_info.argtypes = [ctypes.c_char_p, ctypes.c_size_t, _INT_P, _INT_P]
        get_info.restype = ctypes.c_int
        decode_into.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
        ]
        decode_into.restype = ctypes.c_void_p
        return _LibWebP(path, get_info, decode_into)
    return None


def _libwebp_candidates() -> list[str]:
    # auditwheel puts Pillow's libraries in `pillow.libs` beside `PIL` (delocate, on macOS, in
    # `PIL/.dylibs`), renamed with a hash: `libwebp-51b0b3f7.so.7.2.0`.
    package = Path(PIL.__file__).resolve().parent
    vendored = [
        *sorted(package.parent.glob("pillow.libs/libwebp-*.so*")),
        *sorted(package.glob(".dylibs/libwebp.*dylib")),
    ]
    system = ctypes.util.find_library("webp")
    return [str(path) for path in vendored] + ([system] if system else [])


def _still_webp(data: bytes, image: Image.Image) -> Image.Image | None:
    """The frame of a still WebP decoded by libwebp into memory Pillow maps without a copy;
    None when `image` is not a still WebP or libwebp is not found (Pillow decodes it then).

    RGB is decoded as RGBA too: Pillow stores RGB with four bytes a pixel, the fourth unused.
    """
    library = libwebp()
    if library is None or not _still(data, image):
        return None
    width, height = ctypes.c_int(), ctypes.c_int()
    if not library.get_info(data, len(data), ctypes.byref(width), ctypes.byref(height)):
        raise OSError("libwebp cannot read the image header")
    if (width.value, height.value) != image.size:
        raise OSError(f"libwebp reads {width.value}x{height.value}, not the declared size")
    pixels = bytearray(image.width * image.height * 4)
    out = (ctypes.c_char * len(pixels)).from_buffer(pixels)
    try:
        if not library.decode_rgba_into(data, len(data), out, len(pixels), image.width * 4):
            raise OSError("libwebp cannot decode the image data")
    finally:
        del out  # releases the export, so the frame below may hold the buffer
    return mapped_frame(pixels, image.mode, image.size)


PILLOW_CHECKED_BELOW: Final = 14
"""The Pillow major version `mapped_frame`'s private call is checked below: the pin's cap in
pyproject.toml, which `tests/test_images_pillow.py` keeps equal to this."""


def mapped_frame(pixels: bytearray, mode: str, size: tuple[int, int]) -> Image.Image:
    """A frame over four-byte-a-pixel `pixels` (RGBA, or RGB with a fourth unused byte).

    Image.frombuffer would map RGB as RGBX; Pillow's core (`_imaging.map_buffer`, private)
    maps any four-byte mode as asked, without a copy: the frame is the buffer's only user,
    so it may be written in place. Where a Pillow lacks or changed that call, the pixels are
    copied through the public API instead (same image, twice the memory for a moment)."""
    mapper = getattr(_imaging, "map_buffer", None)
    if mapper is not None:
        try:
            return Image.new(mode, (0, 0))._new(mapper(pixels, size, "raw", 0, (mode, 0, 1)))
        except (TypeError, ValueError, AttributeError):
            pass
    if mode == "RGBA":
        return Image.frombuffer(mode, size, pixels, "raw", mode, 0, 1)
    return Image.frombytes(mode, size, bytes(pixels), "raw", "RGBX")


def _detached(image: Image.Image) -> Image.Image:
    """The same pixels without the plugin's state: a decoded WebP keeps libwebp's two canvases
    and a copy of the frame alive for as long as the image object lives."""
    return image._new(image.im)


@contextmanager
def decoding(media_type: str) -> Iterator[None]:
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


def check_pixels(width: int, height: int) -> None:
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


def orientation_of(image: Image.Image) -> int:
    return orientation_from(image.getexif())


def orientation_from(exif: Image.Exif) -> int:
    """EXIF orientation 1-8; 1 (upright) when absent or out of range."""
    value = exif.get(ExifTags.Base.Orientation, 1)
    return value if isinstance(value, int) and 1 <= value <= 8 else 1


def icc_profile_of(image: Image.Image) -> bytes | None:
    profile = image.info.get("icc_profile")
    return profile if isinstance(profile, bytes) and len(profile) >= 128 else None
