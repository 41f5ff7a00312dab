"""Real images for the image-stage tests, drawn and encoded with Pillow (no mocks)."""

from __future__ import annotations

import base64
import io
import random
import struct
import zlib
from functools import lru_cache
from pathlib import Path

import skimage.data
from _lying_images import lying_images
from PIL import Image, ImageCms, ImageDraw, ImageFont

from visiongate.adapters.images import ImageTarget, ProcessedImage, sniff_media_type

ALL_FORMATS = ("image/jpeg", "image/png", "image/gif", "image/webp")
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
WORDS = ("gate", "policy", "image", "budget", "screenshot", "model", "provider", "native")


def encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def decode(data: bytes) -> Image.Image:
    """Open and fully decode, as a provider would."""
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def target(
    formats: tuple[str, ...] = ALL_FORMATS, budget: int = 262_144, edge: int = 1568
) -> ImageTarget:
    return ImageTarget(formats=formats, budget_base64=budget, max_edge_px=edge)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    if FONT.exists():
        return ImageFont.truetype(str(FONT), size)
    return ImageFont.load_default(size=size)


def screenshot(width: int, height: int, seed: int = 0) -> Image.Image:
    """A desktop-like screen: title bar, sidebar, buttons and lines of text."""
    rng = random.Random(seed)
    scale = max(1.0, width / 2560)
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    bar = int(36 * scale)
    draw.rectangle((0, 0, width, bar), fill=(236, 236, 240))
    side = int(240 * scale)
    draw.rectangle((0, bar, side, height), fill=(243, 244, 246))
    text = _font(int(14 * scale))
    line = int(22 * scale)
    most = max(4, (width - side) // int(70 * scale))
    for y in range(bar + line, height - line, line):
        draw.text((int(12 * scale), y), rng.choice(WORDS).title(), font=text, fill=(40, 40, 40))
        if rng.random() < 0.3:
            continue  # paragraph breaks: real screens are not walls of text
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, most)))
        draw.text((side + int(20 * scale), y), words, font=text, fill=(20, 20, 20))
    for index in range(4):
        left = side + int((20 + 130 * index) * scale)
        draw.rounded_rectangle(
            (left, bar + 4, left + int(110 * scale), bar + int(30 * scale)),
            radius=int(5 * scale),
            fill=(37, 99, 235),
        )
    return image


@lru_cache(maxsize=1)
def photo() -> Image.Image:
    """A real photo bundled with scikit-image (512x512 RGB)."""
    return Image.fromarray(skimage.data.astronaut())


def exif_orientation(value: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = value
    return exif.tobytes()


def swapped_primaries_profile() -> bytes:
    """A valid RGB colour profile that is not sRGB: lcms's sRGB with red and blue swapped."""
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    (count,) = struct.unpack_from(">I", profile, 128)
    entries = {profile[132 + 12 * i : 136 + 12 * i]: 136 + 12 * i for i in range(count)}
    red, blue = entries[b"rXYZ"], entries[b"bXYZ"]
    swapped = bytearray(profile)
    swapped[red : red + 8], swapped[blue : blue + 8] = (
        profile[blue : blue + 8],
        profile[red : red + 8],
    )
    return bytes(swapped)


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_declaring(width: int, height: int) -> bytes:
    """A PNG whose valid IHDR declares `width`x`height`, with almost no pixel data."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\x00" * 16)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", data)
        + png_chunk(b"IEND", b"")
    )


ADAM7 = (
    (0, 0, 8, 8),
    (4, 0, 8, 8),
    (0, 4, 4, 8),
    (2, 0, 4, 4),
    (0, 2, 2, 4),
    (1, 0, 2, 2),
    (0, 1, 1, 2),
)


def adam7_png(picture: Image.Image, passes: int = 7) -> bytes:
    """`picture` in grey as an interlaced PNG (Pillow writes none), with data for `passes`."""
    grey = picture.convert("L")
    width, height = grey.size
    pixels = grey.tobytes()
    rows = []
    for x0, y0, dx, dy in ADAM7[:passes]:
        for y in range(y0, height, dy):
            line = pixels[y * width + x0 : (y + 1) * width : dx]
            if line:
                rows.append(b"\x00" + line)
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 1)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + png_chunk(b"IEND", b"")
    )


def lying(name: str) -> bytes:
    """The bytes of the hostile sample called `name` (see `_lying_images`)."""
    return next(sample.data for sample in lying_images() if sample.name == name)


def animated(fmt: str, frames: int, size: tuple[int, int] = (48, 32)) -> bytes:
    """An animation whose frame i is filled with a distinct colour (frame 0 is red)."""
    colours = [(255, 0, 0), (0, 0, 255), (0, 160, 0), (200, 200, 0)]
    images = [Image.new("RGB", size, colours[i % len(colours)]) for i in range(frames)]
    if fmt == "GIF":
        images = [image.convert("P") for image in images]
    return encode(images[0], fmt, save_all=True, append_images=images[1:], duration=50, loop=0)


def assert_fits(result: ProcessedImage, limits: ImageTarget, source: tuple[int, int]) -> None:
    """The attachment decodes as what it says, within budget and ceiling, same aspect (±1 px)."""
    image = decode(result.data)
    assert sniff_media_type(result.data) == result.media_type
    assert result.media_type in limits.formats
    assert image.size == (result.width, result.height)
    assert len(base64.b64encode(result.data)) <= limits.budget_base64
    assert len(result.base64) <= limits.budget_base64
    assert max(image.size) <= limits.max_edge_px
    assert (result.original_width, result.original_height) == source
    width, height = source
    if width >= height:
        assert abs(result.height - result.width * height / width) <= 1
    else:
        assert abs(result.width - result.height * width / height) <= 1
