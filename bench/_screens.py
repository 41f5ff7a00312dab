"""Synthetic but realistic desktop screenshots: window chrome, sidebars, dense text, code, UI.

Deterministic for a given (size, seed, theme) so benchmark runs compare like with like.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_TEXT = (
    "the gate routes images produced by agent tools to the model as pixels or as text "
    "policy source native lane budget screenshot browser server request result error "
    "configure deploy commit branch merge review pipeline cache token model provider "
    "window button select open close save export import settings account profile search "
    "quarterly revenue growth forecast region north south customer order invoice total"
)
_WORDS = tuple(_TEXT.split())
_CODE = (
    "def process(data: bytes, target: Target) -> Result:",
    "    image = Image.open(io.BytesIO(data), formats=[fmt])",
    "    if image.width * image.height > LIMIT:",
    '        return Refused("refused: too many pixels")',
    "    for quality in (85, 70, 50):",
    "        encoded = encode(image, quality=quality)",
    "    return Processed(encoded, width=w, height=h)",
    "const result = await fetch(`/api/v1/items?page=${page}`);",
    "SELECT id, name, total FROM orders WHERE total > 100;",
)


@dataclass(frozen=True)
class Theme:
    """Colours of one desktop look."""

    background: tuple[int, int, int]
    panel: tuple[int, int, int]
    text: tuple[int, int, int]
    muted: tuple[int, int, int]
    accent: tuple[int, int, int]
    code_background: tuple[int, int, int]


LIGHT = Theme(
    (255, 255, 255), (243, 244, 246), (30, 30, 30), (110, 115, 125), (37, 99, 235), (40, 44, 52)
)
DARK = Theme(
    (30, 31, 34), (43, 45, 49), (220, 221, 222), (150, 152, 157), (88, 101, 242), (20, 21, 24)
)


@lru_cache(maxsize=32)
def _font(size: int, kind: str = "DejaVuSans.ttf") -> ImageFont.FreeTypeFont:
    path = _FONT_DIR / kind
    if path.exists():
        return ImageFont.truetype(str(path), size)
    # Pillow >= 10.1 ships a scalable default font; metrics differ but the look is similar.
    return ImageFont.load_default(size=size)  # type: ignore[return-value]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize()


def _paragraph(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    rng: random.Random,
    size: int,
    color: tuple[int, int, int],
) -> int:
    left, top, right, bottom = box
    font = _font(size)
    line_height = int(size * 1.45)
    y = top
    while y + line_height <= bottom:
        line = ""
        while True:
            candidate = (line + " " + rng.choice(_WORDS)).strip()
            if draw.textlength(candidate, font=font) > right - left:
                break
            line = candidate
        draw.text((left, y), line, font=font, fill=color)
        y += line_height
        if rng.random() < 0.12:
            y += line_height // 2
    return y


def _window_chrome(draw: ImageDraw.ImageDraw, width: int, s: float, theme: Theme) -> int:
    bar = int(38 * s)
    draw.rectangle((0, 0, width, bar), fill=theme.panel)
    for i, color in enumerate(((255, 95, 86), (255, 189, 46), (39, 201, 63))):
        cx = int((20 + 22 * i) * s)
        r = int(6 * s)
        draw.ellipse((cx - r, bar // 2 - r, cx + r, bar // 2 + r), fill=color)
    address = (int(120 * s), int(7 * s), width - int(200 * s), bar - int(7 * s))
    draw.rounded_rectangle(address, radius=int(6 * s), fill=theme.background)
    draw.text(
        (address[0] + int(10 * s), address[1] + int(5 * s)),
        "https://dashboard.example.com/projects/visiongate/settings?tab=images",
        font=_font(int(13 * s)),
        fill=theme.muted,
    )
    return bar


def _sidebar(
    draw: ImageDraw.ImageDraw, top: int, height: int, s: float, theme: Theme, rng: random.Random
) -> int:
    width = int(250 * s)
    draw.rectangle((0, top, width, height), fill=theme.panel)
    y = top + int(14 * s)
    item = int(28 * s)
    for i in range((height - y) // item):
        if i == 3:
            draw.rectangle(
                (int(8 * s), y - int(4 * s), width - int(8 * s), y + item - int(6 * s)),
                fill=theme.accent,
            )
        color = (255, 255, 255) if i == 3 else theme.text
        icon = tuple(rng.randrange(60, 230) for _ in range(3))
        draw.rounded_rectangle(
            (int(16 * s), y, int(32 * s), y + int(16 * s)), radius=int(3 * s), fill=icon
        )
        draw.text(
            (int(42 * s), y), _sentence(rng, rng.randint(1, 3)), font=_font(int(14 * s)), fill=color
        )
        y += item
    return width


def _buttons(draw: ImageDraw.ImageDraw, left: int, top: int, s: float, theme: Theme) -> int:
    x = left
    for i, label in enumerate(("Save changes", "Cancel", "Export", "Delete")):
        font = _font(int(14 * s), "DejaVuSans-Bold.ttf")
        w = int(draw.textlength(label, font=font)) + int(28 * s)
        h = int(34 * s)
        fill = theme.accent if i == 0 else ((220, 38, 38) if i == 3 else theme.panel)
        draw.rounded_rectangle(
            (x, top, x + w, top + h),
            radius=int(6 * s),
            fill=fill,
            outline=theme.muted if i in (1, 2) else None,
        )
        text_color = theme.text if i in (1, 2) else (255, 255, 255)
        draw.text((x + int(14 * s), top + int(8 * s)), label, font=font, fill=text_color)
        x += w + int(12 * s)
    return top + int(50 * s)


def _code_block(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    s: float,
    theme: Theme,
    rng: random.Random,
) -> None:
    draw.rounded_rectangle(box, radius=int(6 * s), fill=theme.code_background)
    size = int(13 * s)
    font = _font(size, "DejaVuSansMono.ttf")
    palette = ((198, 120, 221), (152, 195, 121), (229, 192, 123), (97, 175, 239), (171, 178, 191))
    y = box[1] + int(10 * s)
    while y + size * 1.5 < box[3]:
        line = rng.choice(_CODE)
        draw.text((box[0] + int(12 * s), y), line, font=font, fill=rng.choice(palette))
        y += int(size * 1.5)


def _table(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    s: float,
    theme: Theme,
    rng: random.Random,
) -> None:
    row = int(30 * s)
    columns = 5
    col = (box[2] - box[0]) // columns
    font = _font(int(13 * s))
    for r, y in enumerate(range(box[1], box[3] - row, row)):
        if r % 2:
            draw.rectangle((box[0], y, box[2], y + row), fill=theme.panel)
        for c in range(columns):
            text = _sentence(rng, 2) if c == 0 else f"{rng.uniform(0, 99999):,.2f}"
            draw.text(
                (box[0] + c * col + int(8 * s), y + int(7 * s)), text, font=font, fill=theme.text
            )
        draw.line((box[0], y + row, box[2], y + row), fill=theme.muted, width=1)


def _chart(
    draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], theme: Theme, rng: random.Random
) -> None:
    draw.rectangle(box, outline=theme.muted)
    bars = 14
    width = (box[2] - box[0]) // bars
    for i in range(bars):
        h = int((box[3] - box[1]) * rng.uniform(0.15, 0.9))
        color = theme.accent if i % 3 else (16, 185, 129)
        draw.rectangle(
            (box[0] + i * width + 4, box[3] - h, box[0] + (i + 1) * width - 4, box[3]), fill=color
        )


def _photo(canvas: Image.Image, box: tuple[int, int, int, int], photo: Image.Image | None) -> None:
    if photo is None:
        return
    size = (box[2] - box[0], box[3] - box[1])
    canvas.paste(photo.resize(size, Image.Resampling.LANCZOS), box[:2])


def screenshot(
    width: int,
    height: int,
    *,
    seed: int = 0,
    theme: Theme = LIGHT,
    photo: Image.Image | None = None,
) -> Image.Image:
    """Draw a desktop screenshot; UI scales with the pixel density of the size."""
    s = 1.0 if width <= 2560 else width / 2560
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), theme.background)
    draw = ImageDraw.Draw(image)
    top = _window_chrome(draw, width, s, theme)
    side = _sidebar(draw, top, height - int(24 * s), s, theme, rng)
    main_left = side + int(32 * s)
    right_panel = width - int(340 * s)
    y = top + int(24 * s)
    draw.text(
        (main_left, y),
        "Image processing settings",
        font=_font(int(26 * s), "DejaVuSans-Bold.ttf"),
        fill=theme.text,
    )
    y = _buttons(draw, main_left, y + int(44 * s), s, theme)
    column = (right_panel - main_left - int(64 * s)) // 2
    y_text = _paragraph(
        draw,
        (main_left, y, main_left + column, y + (height - y) // 2),
        rng,
        int(15 * s),
        theme.text,
    )
    _code_block(
        draw,
        (main_left, y_text + int(10 * s), main_left + column, height - int(40 * s)),
        s,
        theme,
        rng,
    )
    second = main_left + column + int(32 * s)
    _photo(image, (second, y, second + column, y + int(column * 0.5)), photo)
    _chart(
        draw, (second, y + int(column * 0.55), second + column, y + int(column * 0.85)), theme, rng
    )
    _table(
        draw, (second, y + int(column * 0.9), second + column, height - int(40 * s)), s, theme, rng
    )
    draw.rectangle((right_panel, top, width, height), fill=theme.panel)
    _paragraph(
        draw,
        (right_panel + int(16 * s), top + int(16 * s), width - int(16 * s), height - int(30 * s)),
        rng,
        int(12 * s),
        theme.muted,
    )
    draw.rectangle((0, height - int(24 * s), width, height), fill=theme.accent)
    draw.text(
        (int(10 * s), height - int(20 * s)),
        "main  ✓ 0 errors  Ln 42, Col 7  UTF-8",
        font=_font(int(12 * s)),
        fill=(255, 255, 255),
    )
    return image


def photo_from_array(array: np.ndarray) -> Image.Image:
    """An RGB Pillow image from a scikit-image sample array (grey, RGB or RGBA)."""
    image = Image.fromarray(np.asarray(array))
    return image.convert("RGB")
