"""Busy pages with known labels: the screens on which the fitter used to give up text.

Each page is drawn with Pillow at a device pixel ratio (1x or 2x) and carries labels, random
words of three or four syllables in Liberation Sans at the sizes real pages use (11-16 CSS px,
so 22-32 device px at 2x), over what makes bytes expensive: photos, textured maps, noise,
gradients, dark panels, dense grids. Every label is returned with its box, so what OCR reads
back can be checked label by label, by position. Deterministic for a given name.

- `gallery`: a 2x grid of captioned photos (2560x1440);
- `map`: a textured map with street lines and labels (1920x1080, 1x);
- `noise`: white text over coloured noise (2560x1440, 2x);
- `gradient`: text over gradients (1440x900, 1x);
- `dashboard`: a dark dashboard of cards with small muted labels (1440x900, 1x);
- `spreadsheet`: a dense grid of cells at 2x (2880x1800);
- `article`: a hero photo over an article's headings and body (2560x1600, 2x).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
import skimage.data
from _pages import Word, _font, _word
from PIL import Image, ImageDraw, ImageFilter

_PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "retina")


@dataclass(frozen=True)
class BusyPage:
    """One page of the corpus and every label on it."""

    name: str
    image: Image.Image
    words: tuple[Word, ...]


class _Labels:
    def __init__(self, image: Image.Image, rng: random.Random, dpr: float) -> None:
        self.draw = ImageDraw.Draw(image)
        self.rng = rng
        self.dpr = dpr
        self.words: list[Word] = []

    def put(
        self,
        x: float,
        y: float,
        css_px: int,
        colour: tuple[int, int, int],
        *,
        count: int = 1,
        bold: bool = False,
    ) -> float:
        """`count` words on one line from (x, y); the x after the last."""
        font = _font(round(css_px * self.dpr), bold)
        space = self.draw.textlength(" ", font=font)
        for _ in range(count):
            text = _word(self.rng)
            width = self.draw.textlength(text, font=font)
            self.draw.text((x, y), text, font=font, fill=colour)
            self.words.append(Word(text, x, y, x + width, y + font.size * 1.25))
            x += width + space
        return x

    def size(self) -> int:
        """A label size in CSS px: 11-16, the small end more often (captions, cells)."""
        return self.rng.choice((11, 12, 12, 13, 13, 14, 15, 16))


@cache
def _photo(name: str) -> Image.Image:
    return Image.fromarray(np.asarray(getattr(skimage.data, name)())).convert("RGB")


def _photo_at(name: str, size: tuple[int, int]) -> Image.Image:
    photo = _photo(name)
    scale = max(size[0] / photo.width, size[1] / photo.height)
    grown = photo.resize(
        (max(size[0], round(photo.width * scale)), max(size[1], round(photo.height * scale))),
        Image.Resampling.LANCZOS,
    )
    return grown.crop((0, 0, *size))


def _noise(
    size: tuple[int, int], seed: int, spread: float, base: tuple[int, int, int]
) -> Image.Image:
    rng = np.random.default_rng(seed)
    width, height = size
    pixels = np.asarray(base, dtype=np.float32) + rng.normal(0, spread, (height, width, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


def _texture(size: tuple[int, int], seed: int) -> Image.Image:
    """Land-use colours in soft blobs with fine grain, as map tiles look."""
    rng = np.random.default_rng(seed)
    width, height = size
    coarse = rng.random((height // 40 + 2, width // 40 + 2, 3)).astype(np.float32)
    blobs = Image.fromarray((coarse * 255).astype(np.uint8)).resize(
        (width, height), Image.Resampling.BICUBIC
    )
    palette = np.asarray(blobs, dtype=np.float32) / 255
    land = (
        np.array((222, 230, 208), np.float32) * (1 - palette)
        + np.array((196, 214, 236), np.float32) * palette
    )
    grain = rng.normal(0, 9, (height, width, 1))
    return Image.fromarray(np.clip(land + grain, 0, 255).astype(np.uint8))


def gallery() -> BusyPage:
    dpr, width, height = 2.0, 2560, 1440
    image = Image.new("RGB", (width, height), (250, 250, 250))
    labels = _Labels(image, random.Random(11), dpr)
    labels.put(48, 28, 16, (20, 20, 20), count=6, bold=True)
    card_w, card_h, gap = 560, 420, 56
    for row in range(2):
        for column in range(4):
            left, top = 64 + column * (card_w + gap), 120 + row * (card_h + 190)
            name = _PHOTOS[(row * 4 + column) % len(_PHOTOS)]
            image.paste(_photo_at(name, (card_w, card_h)), (left, top))
            y = top + card_h + 14
            labels.put(left, y, labels.size(), (30, 30, 30), count=3)
            labels.put(left, y + 46, labels.size(), (105, 110, 118), count=3)
            labels.put(left, y + 92, 11, (105, 110, 118), count=2)
    return BusyPage("gallery 2560x1440 @2x", image, tuple(labels.words))


def street_map() -> BusyPage:
    dpr, width, height = 1.0, 1920, 1080
    image = _texture((width, height), 3)
    rng = random.Random(3)
    draw = ImageDraw.Draw(image)
    for _ in range(46):
        points = [(rng.randrange(width), rng.randrange(height)) for _ in range(4)]
        wide = rng.random() < 0.3
        draw.line(points, fill=(255, 255, 255), width=9 if wide else 5)
        draw.line(points, fill=(250, 214, 120) if wide else (244, 244, 244), width=6 if wide else 3)
    for _ in range(30):
        x, y = rng.randrange(width), rng.randrange(height)
        draw.rectangle(
            (x, y, x + rng.randrange(12, 40), y + rng.randrange(12, 40)), fill=(214, 208, 200)
        )
    labels = _Labels(image, random.Random(4), dpr)
    for row in range(18):
        y = 20 + row * 58
        x = 24 + rng.randrange(60)
        while x < width - 260:
            colour = (60, 64, 70) if rng.random() < 0.7 else (40, 90, 160)
            x = labels.put(x, y + rng.randrange(16), labels.size() + 1, colour) + rng.randrange(
                60, 200
            )
    return BusyPage("map 1920x1080 @1x", image, tuple(labels.words))


def noisy_text() -> BusyPage:
    dpr, width, height = 2.0, 2560, 1440
    image = _noise((width, height), 5, 48, (96, 100, 112))
    labels = _Labels(image, random.Random(5), dpr)
    rng = random.Random(6)
    y = 40
    while y < height - 60:
        x = 48.0
        while x < width - 420:
            x = labels.put(x, y, labels.size(), (255, 255, 255), count=rng.randint(1, 3))
            x += 60
        y += 64 + rng.randrange(30)
    return BusyPage("noise 2560x1440 @2x", image, tuple(labels.words))


def gradient_text() -> BusyPage:
    dpr, width, height = 1.0, 1440, 900
    ramp = np.linspace(0, 1, width, dtype=np.float32)[None, :, None]
    down = np.linspace(0, 1, height, dtype=np.float32)[:, None, None]
    pixels = (
        np.array((255, 140, 60), np.float32) * (1 - ramp) * (1 - down)
        + np.array((60, 90, 220), np.float32) * ramp
        + np.array((40, 170, 120), np.float32) * down * (1 - ramp)
    )
    grain = np.random.default_rng(8).normal(0, 4, (height, width, 1))
    image = Image.fromarray(np.clip(pixels + grain, 0, 255).astype(np.uint8))
    labels = _Labels(image, random.Random(8), dpr)
    rng = random.Random(9)
    y = 24
    while y < height - 30:
        x = 32.0
        while x < width - 240:
            colour = (255, 255, 255) if rng.random() < 0.6 else (15, 15, 30)
            x = labels.put(x, y, labels.size(), colour, count=rng.randint(1, 4)) + 40
        y += 34 + rng.randrange(12)
    return BusyPage("gradient 1440x900 @1x", image, tuple(labels.words))


def dashboard() -> BusyPage:
    dpr, width, height = 1.0, 1440, 900
    image = Image.new("RGB", (width, height), (17, 19, 24))
    draw = ImageDraw.Draw(image)
    labels = _Labels(image, random.Random(12), dpr)
    rng = random.Random(13)
    draw.rectangle((0, 0, 220, height), fill=(24, 27, 34))
    for row in range(22):
        labels.put(20, 70 + row * 36, 13, (150, 156, 168))
    for row in range(3):
        for column in range(3):
            left, top = 250 + column * 396, 30 + row * 290
            draw.rounded_rectangle((left, top, left + 376, top + 270), 8, fill=(30, 34, 42))
            labels.put(left + 16, top + 12, 13, (200, 204, 214), count=2, bold=True)
            points = [(left + 16 + i * 18, top + 150 - rng.randrange(80)) for i in range(20)]
            draw.line(points, fill=(88, 166, 255), width=2)
            for line in range(4):
                y = top + 170 + line * 24
                labels.put(left + 16, y, 11, (130, 136, 148), count=2)
                labels.put(left + 250, y, 12, (220, 224, 230))
    return BusyPage("dashboard 1440x900 @1x", image, tuple(labels.words))


def spreadsheet() -> BusyPage:
    dpr, width, height = 2.0, 2880, 1800
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    labels = _Labels(image, random.Random(14), dpr)
    cell_w, cell_h = 240, 44
    for column in range(width // cell_w + 1):
        draw.line((column * cell_w, 0, column * cell_w, height), fill=(218, 220, 224), width=2)
    for row in range(height // cell_h + 1):
        draw.line((0, row * cell_h, width, row * cell_h), fill=(218, 220, 224), width=2)
        if row % 2:
            draw.rectangle(
                (0, row * cell_h + 2, width, (row + 1) * cell_h - 1), fill=(246, 248, 250)
            )
    rng = random.Random(15)
    for row in range(height // cell_h):
        for column in range(width // cell_w):
            if rng.random() < 0.8:
                colour = (32, 33, 36) if column else (25, 80, 170)
                labels.put(column * cell_w + 10, row * cell_h + 8, rng.choice((11, 12, 13)), colour)
    return BusyPage("spreadsheet 2880x1800 @2x", image, tuple(labels.words))


def article() -> BusyPage:
    dpr, width, height = 2.0, 2560, 1600
    image = Image.new("RGB", (width, height), (255, 255, 255))
    image.paste(_photo_at("coffee", (width, 720)), (0, 0))
    labels = _Labels(image, random.Random(16), dpr)
    labels.put(96, 620, 16, (255, 255, 255), count=5, bold=True)
    labels.put(96, 760, 12, (110, 110, 110), count=6)
    rng = random.Random(17)
    y = 830
    while y < height - 50:
        x = 96.0
        size = 16 if rng.random() < 0.8 else 13
        while x < 1700:
            x = labels.put(x, y, size, (30, 30, 30), count=1)
        y += round(size * 1.6 * dpr)
    side = 1860
    for row in range(12):
        image.paste(
            _photo_at(_PHOTOS[row % len(_PHOTOS)], (120, 80)).filter(ImageFilter.SMOOTH),
            (side, 800 + row * 64),
        )
        labels.put(side + 140, 806 + row * 64, 12, (40, 40, 40), count=2)
    return BusyPage("article 2560x1600 @2x", image, tuple(labels.words))


BUILDERS: tuple[Callable[[], BusyPage], ...] = (
    gallery,
    street_map,
    noisy_text,
    gradient_text,
    dashboard,
    spreadsheet,
    article,
)


def busy_pages() -> list[BusyPage]:
    return [build() for build in BUILDERS]
