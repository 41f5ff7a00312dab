"""Screenshot sequences with known text, as an agent's computer-use loop would take them.

Four kinds, each deterministic for a given size: a terminal gaining lines (and scrolling
once full), a form being filled in one field per step, a page scrolling under a fixed
header and sidebar, and an unchanged screen (the same bytes, then the same pixels
re-encoded). Every string drawn is recorded with its box, so each screenshot carries its
ground truth.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters.vision._layout import TextBox

_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_TEXT = (
    "the gate routes images produced by agent tools to the model as pixels or as text policy "
    "source native lane budget screenshot browser server request result error configure "
    "deploy commit branch merge review pipeline cache token model provider window button "
    "select open close save export import settings account profile search quarterly revenue "
    "growth forecast region north south customer order invoice total"
)
_WORDS = tuple(_TEXT.split())
_COMMANDS = (
    ("git status --short", ("M adapters/vision/_ocr.py", "?? bench/_sequences.py")),
    ("ls -la bench", ("total 64", "-rw-r--r-- 1 dev dev 5120 bench_ocr.py")),
    ("python -m pytest -q tests/test_vision_ocr.py", ("12 passed in 41.20s",)),
    ("du -sh ~/.cache/visiongate", ("184M /home/dev/.cache/visiongate",)),
    ("grep -rn describe adapters | wc -l", ("37",)),
    ("uname -a", ("Linux devbox 6.1.0-18-amd64 x86_64 GNU/Linux",)),
    ("echo $VISIONGATE_CACHE_DIR", ("/var/cache/visiongate",)),
    ("head -3 CHANGELOG.md", ("# Changelog", "", "## [Unreleased]")),
)
_FIELDS = (
    ("Full name", "Ada Lovelace"),
    ("Email address", "ada@example.com"),
    ("Company", "Analytical Engines Ltd"),
    ("Street", "12 St James's Square"),
    ("City", "London"),
    ("Postcode", "SW1Y 4JH"),
    ("Phone", "+44 20 7946 0321"),
    ("Invoice reference", "INV-2024-0042"),
)
Font = ImageFont.FreeTypeFont
RGB = tuple[int, int, int]


@lru_cache(maxsize=64)
def font(size: int, name: str = "DejaVuSans.ttf") -> Font:
    return ImageFont.truetype(str(_FONT_DIR / name), size)


@dataclass(frozen=True)
class Shot:
    """One screenshot (PNG bytes) and the text drawn in it, box by box."""

    png: bytes
    truth: tuple[TextBox, ...]
    size: tuple[int, int]


@dataclass(frozen=True)
class Sequence:
    kind: str
    size: tuple[int, int]
    shots: tuple[Shot, ...]


class Canvas:
    """A Pillow image that records every string drawn on it."""

    def __init__(self, size: tuple[int, int], background: RGB) -> None:
        self.size = size
        self.image = Image.new("RGB", size, background)
        self.draw = ImageDraw.Draw(self.image)
        self.truth: list[TextBox] = []

    def text(self, x: int, y: int, value: str, face: Font, fill: RGB) -> None:
        if not value.strip():
            return
        self.draw.text((x, y), value, font=face, fill=fill)
        left, top, right, bottom = self.draw.textbbox((x, y), value, font=face)
        self.truth.append(TextBox(left, top, right, bottom, value))

    def box(self, rect: tuple[int, int, int, int], fill: RGB, outline: RGB | None = None) -> None:
        self.draw.rectangle(rect, fill=fill, outline=outline)

    def shot(self, compress_level: int = 6) -> Shot:
        buffer = io.BytesIO()
        self.image.save(buffer, "PNG", compress_level=compress_level)
        return Shot(buffer.getvalue(), tuple(self.truth), self.size)


def _scale(size: tuple[int, int]) -> float:
    """UI scale: 1 up to 1920 wide, 1.25 at 2560 (a common desktop setting)."""
    return 1.25 if size[0] >= 2560 else 1.0


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize()


def _title_bar(canvas: Canvas, title: str, s: float, dark: bool) -> int:
    height = int(32 * s)
    canvas.box((0, 0, canvas.size[0], height), (50, 52, 58) if dark else (226, 228, 232))
    fill = (220, 220, 220) if dark else (30, 30, 30)
    canvas.text(int(16 * s), int(8 * s), title, font(int(14 * s)), fill)
    return height


# -- terminal ------------------------------------------------------------------------------


def _blocks(rng: random.Random, count: int) -> list[list[str]]:
    """`count` commands, each with its output lines."""
    blocks = []
    for _ in range(count):
        command, output = rng.choice(_COMMANDS)
        blocks.append([f"{_PROMPT} {command}", *output])
    return blocks


_PROMPT = "dev@devbox:~/visiongate$"


def terminal(size: tuple[int, int], steps: int) -> Sequence:
    """A shell session: each step runs one command; once the screen is full it scrolls."""
    s = _scale(size)
    pitch, face = int(20 * s), font(int(15 * s), "DejaVuSansMono.ttf")
    top = int(32 * s) + int(10 * s)
    capacity = (size[1] - top - int(8 * s)) // pitch
    blocks = _blocks(random.Random(size[0]), capacity + steps)
    done = 0
    while sum(len(block) for block in blocks[: done + 1]) < capacity - 6:
        done += 1
    shots = []
    for _ in range(steps):
        canvas = Canvas(size, (24, 25, 28))
        _title_bar(canvas, "dev@devbox: ~/visiongate - Terminal", s, dark=True)
        lines = [line for block in blocks[:done] for line in block] + [_PROMPT]
        visible = lines[-capacity:]
        for row, line in enumerate(visible):
            canvas.text(int(12 * s), top + row * pitch, line, face, (215, 218, 222))
        y = top + (len(visible) - 1) * pitch
        x = int(12 * s) + int(face.getlength(_PROMPT + " "))
        canvas.box((x, y + 2, x + int(9 * s), y + pitch - 3), (215, 218, 222))
        shots.append(canvas.shot())
        done += 1
    return Sequence("terminal", size, tuple(shots))


# -- form ------------------------------------------------------------------------------


def form(size: tuple[int, int], steps: int) -> Sequence:
    """A web form filled one field per step, focus moving from field to field."""
    s = _scale(size)
    rng = random.Random(size[1])
    help_text = [_sentence(rng, rng.randint(4, 8)) for _ in range(14)]
    shots = []
    for step in range(steps):
        canvas = Canvas(size, (255, 255, 255))
        top = _title_bar(canvas, "Billing details - Example Shop - Web Browser", s, dark=False)
        label, value_face = font(int(15 * s)), font(int(15 * s))
        canvas.text(
            int(60 * s),
            top + int(30 * s),
            "Billing details",
            font(int(24 * s), "DejaVuSans-Bold.ttf"),
            (20, 20, 20),
        )
        for index, (name, value) in enumerate(_FIELDS):
            y = top + int(90 * s) + index * int(56 * s)
            canvas.text(int(60 * s), y + int(8 * s), name, label, (60, 60, 60))
            field = (int(260 * s), y, int(260 * s) + int(420 * s), y + int(36 * s))
            focused = index == step
            canvas.box(field, (255, 255, 255), (37, 99, 235) if focused else (170, 170, 170))
            if index < step:
                canvas.text(field[0] + int(10 * s), y + int(8 * s), value, value_face, (20, 20, 20))
        x = size[0] // 2 + int(120 * s)
        canvas.text(
            x,
            top + int(90 * s),
            "Why we ask",
            font(int(17 * s), "DejaVuSans-Bold.ttf"),
            (20, 20, 20),
        )
        for row, line in enumerate(help_text):
            canvas.text(
                x, top + int(126 * s) + row * int(26 * s), line, font(int(14 * s)), (90, 90, 90)
            )
        shots.append(canvas.shot())
    return Sequence("form", size, tuple(shots))


# -- scrolling page ------------------------------------------------------------------------


def scrolling(size: tuple[int, int], steps: int) -> Sequence:
    """An article scrolling a few lines per step under a fixed header and sidebar."""
    s = _scale(size)
    pitch = int(26 * s)
    header = int(32 * s) + int(48 * s)
    footer = int(28 * s)
    view_rows = (size[1] - header - footer) // pitch
    view_height = view_rows * pitch
    article = _article(size, pitch, view_rows + 4 * steps)
    shots = []
    for step in range(steps):
        canvas = Canvas(size, (250, 250, 250))
        _page_chrome(canvas, s, header)
        offset = step * 3 * pitch
        window = article.image.crop((0, offset, article.size[0], offset + view_height))
        left = int(300 * s)
        canvas.image.paste(window, (left, header))
        for box in article.truth:
            if box.top >= offset and box.bottom <= offset + view_height:
                y = header - offset
                canvas.truth.append(
                    TextBox(
                        box.left + left, box.top + y, box.right + left, box.bottom + y, box.text
                    )
                )
        thumb = header + step * int(30 * s)
        canvas.box(
            (size[0] - int(12 * s), thumb, size[0] - int(4 * s), thumb + int(120 * s)),
            (160, 160, 160),
        )
        canvas.box((0, size[1] - footer, size[0], size[1]), (0, 102, 184))
        canvas.text(
            int(12 * s),
            size[1] - footer + int(6 * s),
            "Reading time 12 min",
            font(int(13 * s)),
            (255, 255, 255),
        )
        shots.append(canvas.shot())
    return Sequence("scroll", size, tuple(shots))


def _page_chrome(canvas: Canvas, s: float, header: int) -> None:
    _title_bar(canvas, "Routing tool images - Docs - Web Browser", s, dark=False)
    canvas.box((0, int(32 * s), canvas.size[0], header), (240, 241, 244))
    canvas.text(
        int(16 * s),
        int(46 * s),
        "https://docs.example.org/visiongate/routing",
        font(int(14 * s)),
        (80, 80, 80),
    )
    canvas.box((0, header, int(280 * s), canvas.size[1]), (244, 245, 247))
    for row, item in enumerate(
        ("Overview", "Install", "Policies", "Lanes", "Sources", "Vision", "Benchmarks", "Changelog")
    ):
        canvas.text(
            int(20 * s),
            header + int(20 * s) + row * int(34 * s),
            item,
            font(int(15 * s)),
            (40, 40, 40),
        )


def _article(size: tuple[int, int], pitch: int, rows: int) -> Canvas:
    s = _scale(size)
    rng = random.Random(size[0] + size[1])
    width = size[0] - int(300 * s) - int(40 * s)
    article = Canvas((width, rows * pitch + pitch), (250, 250, 250))
    body, heading = font(int(15 * s)), font(int(18 * s), "DejaVuSans-Bold.ttf")
    row = 0
    while row < rows:
        if row % 9 == 0:
            article.text(0, row * pitch + 2, _sentence(rng, 3), heading, (20, 20, 20))
        else:
            line = ""
            while article.draw.textlength(line, font=body) < width * rng.uniform(0.55, 0.9):
                line = f"{line} {rng.choice(_WORDS)}".strip()
            article.text(0, row * pitch + 4, line, body, (40, 40, 40))
        row += 1
    return article


# -- unchanged screen ------------------------------------------------------------------------


def unchanged(size: tuple[int, int], steps: int) -> Sequence:
    """The same screen every step: identical bytes, then identical pixels re-encoded."""
    base = form(size, 5).shots[-1]
    image = Image.open(io.BytesIO(base.png))
    shots = [base]
    for step in range(1, steps):
        if step % 2:
            shots.append(base)
            continue
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=1 + step % 9)
        shots.append(Shot(buffer.getvalue(), base.truth, base.size))
    return Sequence("unchanged", size, tuple(shots))


KINDS: dict[str, Callable[[tuple[int, int], int], Sequence]] = {
    "terminal": terminal,
    "form": form,
    "scroll": scrolling,
    "unchanged": unchanged,
}
SIZES = ((1280, 720), (1920, 1080), (2560, 1440))


def corpus(
    sizes: tuple[tuple[int, int], ...], steps: int, kinds: tuple[str, ...]
) -> Iterator[Sequence]:
    for size in sizes:
        for kind in kinds:
            yield KINDS[kind](size, steps)
