"""Full-page captures of text with known words: what a browser's `fullPage` screenshot holds.

A page is a site header, one column of headings and paragraphs and, on wide pages, a sidebar
of links, drawn with Pillow in Liberation Sans (Arial's metrics) at the sizes web pages use:
16 px body text at 1.6 line height, 26 px headings, 15 px links. `scale` draws the same page
at another device pixel ratio (2.0: a retina capture of a page half as wide). Every word drawn
is returned with its box, so what OCR reads back can be checked word by word, by position.
Deterministic for a given (size, seed, scale).
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

_FONTS = Path("/usr/share/fonts/truetype/liberation")
_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"
BODY_PX = 16
HEADING_PX = 26
LINK_PX = 15
COLUMN_PX = 760
SIDEBAR_PX = 260


@dataclass(frozen=True)
class Word:
    """One word drawn on the page, with its box in page pixels."""

    text: str
    left: float
    top: float
    right: float
    bottom: float


def encoded(image: Image.Image, fmt: str = "PNG", **options: object) -> bytes:
    """`image` written as `fmt` (PNG by default), with the writer's `options`."""
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


@lru_cache(maxsize=16)
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    name = "LiberationSans-Bold.ttf" if bold else "LiberationSans-Regular.ttf"
    return ImageFont.truetype(str(_FONTS / name), size)


def _word(rng: random.Random) -> str:
    # Three or four syllables: unique enough that finding one in a line read is no accident.
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(3, 4)))


class _Writer:
    def __init__(self, image: Image.Image, rng: random.Random, scale: float) -> None:
        self.draw = ImageDraw.Draw(image)
        self.rng = rng
        self.scale = scale
        self.words: list[Word] = []

    def block(
        self, box: tuple[int, int, int, int], size: int, count: int, *, bold: bool = False
    ) -> int:
        """`count` words flowed into `box` (left, top, right, bottom); the y after the last line,
        or `box[3]` when the box filled first."""
        left, top, right, bottom = box
        font = _font(round(size * self.scale), bold)
        line = round(size * 1.6 * self.scale)
        space = self.draw.textlength(" ", font=font)
        x, y = float(left), top
        colour = (24, 24, 27) if not bold else (10, 10, 10)
        for _ in range(count):
            text = _word(self.rng)
            width = self.draw.textlength(text, font=font)
            if x + width > right and x > left:
                x, y = float(left), y + line
            if y + line > bottom:
                return bottom
            self.draw.text((x, y + (line - font.size) / 2), text, font=font, fill=colour)
            self.words.append(Word(text, x, y, x + width, y + line))
            x += width + space
        return y + line


def text_page(
    width: int, height: int, *, seed: int = 0, scale: float = 1.0
) -> tuple[Image.Image, tuple[Word, ...]]:
    """A `width` x `height` page full of text, and every word on it."""
    rng = random.Random(seed * 7919 + width * 31 + height)
    image = Image.new("RGB", (width, height), (255, 255, 255))
    writer = _Writer(image, rng, scale)
    px = lambda value: round(value * scale)  # noqa: E731 - CSS pixels to device pixels
    header = px(64)
    ImageDraw.Draw(image).rectangle((0, 0, width, header), fill=(246, 247, 249))
    writer.block((px(24), px(18), width - px(24), header), LINK_PX, 12, bold=True)
    sidebar = width >= px(1180)
    column_left = px(48)
    column_right = min(
        width - px(48) - (px(SIDEBAR_PX + 40) if sidebar else 0), column_left + px(COLUMN_PX)
    )
    if sidebar:
        side_left = width - px(48) - px(SIDEBAR_PX)
        y = header + px(32)
        while y < height - px(40):
            y = writer.block(
                (side_left, y, width - px(48), height - px(24)), LINK_PX, rng.randint(2, 4)
            )
            y += px(8)
    y = header + px(32)
    while y < height - px(40):
        y = writer.block(
            (column_left, y, column_right, height - px(24)),
            HEADING_PX,
            rng.randint(2, 5),
            bold=True,
        )
        for _ in range(rng.randint(2, 4)):
            y = writer.block(
                (column_left, y + px(6), column_right, height - px(24)),
                BODY_PX,
                rng.randint(30, 90),
            )
        y += px(20)
    return image, tuple(writer.words)
