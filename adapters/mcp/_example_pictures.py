"""The example server's pictures, drawn with Pillow alone: what a server sends, without the
MCP SDK, so a test's own server (`tests/_hostile_proxy.py`) or a test can draw the same
pictures without importing the SDK (half a second of CPU per process).

`example_server` re-exports them; this module imports nothing of MCP.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Final

from PIL import Image, ImageDraw, ImageFont

__all__ = [
    "BLACK_FLAG",
    "CANCEL_TAG",
    "ENGLAND_FLAG",
    "SCREEN_SIZE",
    "TAG_BASE",
    "gallery_images",
    "screenshot_png",
    "tags",
    "tile_png",
]

SCREEN_SIZE: Final = (2560, 1440)
TAG_BASE: Final = 0xE0000
BLACK_FLAG: Final = "\U0001f3f4"
CANCEL_TAG: Final = "\U000e007f"
ENGLAND_FLAG: Final = BLACK_FLAG + "".join(chr(TAG_BASE + ord(c)) for c in "gbeng") + CANCEL_TAG

_PALETTE: Final = (
    (231, 76, 60),
    (46, 204, 113),
    (52, 152, 219),
    (241, 196, 15),
    (155, 89, 182),
    (26, 188, 156),
    (230, 126, 34),
    (52, 73, 94),
)
_WORDS: Final = (
    *("build", "passed", "deploy", "staging", "review", "merge", "branch", "commit"),
    *("pipeline", "latency", "p99", "error", "rate", "requests", "users", "session"),
    *("cache", "hit", "miss", "queue", "worker", "retry", "timeout", "region", "replica"),
)


def tags(text: str) -> str:
    """`text` spelled in invisible Unicode tag characters (ASCII smuggling)."""
    return "".join(chr(TAG_BASE + ord(character)) for character in text)


@lru_cache(maxsize=1)
def screenshot_png() -> bytes:
    """A deterministic 2560x1440 screenshot-like PNG: title bar, sidebar, panes of text."""
    width, height = SCREEN_SIZE
    image = Image.new("RGB", SCREEN_SIZE, (245, 246, 248))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=22)
    small = ImageFont.load_default(size=16)
    draw.rectangle((0, 0, width, 56), fill=(36, 41, 47))
    draw.text((24, 14), "visiongate — Build dashboard — main", fill=(240, 240, 240), font=font)
    draw.rectangle((0, 56, 360, height), fill=(227, 230, 235))
    for row in range(30):
        draw.text((28, 80 + row * 44), f"project-{row:02d}", fill=(40, 40, 40), font=font)
    for column in range(3):
        _pane(draw, 400 + column * 720, 96, column, small)
    return _png(image)


def _pane(
    draw: ImageDraw.ImageDraw,
    left: int,
    top: int,
    seed: int,
    font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
) -> None:
    draw.rectangle(
        (left, top, left + 680, top + 1300), fill=(255, 255, 255), outline=(200, 200, 200)
    )
    for line in range(60):
        words = [_WORDS[(seed * 7 + line * 3 + k) % len(_WORDS)] for k in range(6)]
        color = _PALETTE[(seed + line) % len(_PALETTE)] if line % 9 == 0 else (30, 30, 30)
        text = f"{line + 1:>3}  " + " ".join(words) + f"  {(seed + 1) * (line + 3) % 997} ms"
        draw.text((left + 16, top + 12 + line * 21), text, fill=color, font=font)


def tile_png(number: int, size: int = 96) -> bytes:
    """A small PNG unique to `number`: a colour from it, and the number written on it."""
    color = ((number * 67) % 256, (number * 131 + 50) % 256, (number * 29 + 100) % 256)
    image = Image.new("RGB", (size, size), color)
    draw = ImageDraw.Draw(image)
    draw.text((8, 8), str(number), fill=(255, 255, 255), font=ImageFont.load_default(size=28))
    return _png(image)


def gallery_images(count: int) -> list[tuple[bytes, str]]:
    """`count` distinct small images, cycling through PNG, JPEG and WebP."""
    formats = (("PNG", "png"), ("JPEG", "jpeg"), ("WEBP", "webp"))
    images = []
    for index in range(count):
        color = _PALETTE[index % len(_PALETTE)]
        image = Image.new("RGB", (320 + 40 * index, 200), color)
        ImageDraw.Draw(image).text((12, 12), f"image {index + 1}", fill=(255, 255, 255))
        pillow_format, subtype = formats[index % len(formats)]
        stream = io.BytesIO()
        image.save(stream, pillow_format)
        images.append((stream.getvalue(), subtype))
    return images


def _png(image: Image.Image) -> bytes:
    stream = io.BytesIO()
    image.save(stream, "PNG")
    return stream.getvalue()
