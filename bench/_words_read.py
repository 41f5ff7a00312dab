"""How many of a page's known words local OCR reads back from what would be sent.

The judge is the local OCR backend the router describes images with (RapidOCR, offline). A
word counts as read when an OCR box covering its position holds it: the recogniser often
drops the space between two words of a line (`pagetihizogadeha`), which costs no legibility,
so a word is found inside the box's text with spaces removed. Images that show a region of
the page (tiles) are read on their own and their boxes mapped back to page coordinates; a
word is read if any image shows it legibly. Text that would be sent as text (a description
of a part no tile shows) counts the words it holds.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cache

import numpy as np
from _pages import Word
from PIL import Image

from visiongate.adapters.vision._ocr import LocalOCRBackend

_SLACK = 8
"""Page pixels a box may fall short of a word's ends and still cover it (OCR boxes are tight)."""


@dataclass(frozen=True)
class Box:
    """What OCR read, in page coordinates."""

    left: float
    top: float
    right: float
    bottom: float
    text: str


@cache
def backend() -> LocalOCRBackend:
    return LocalOCRBackend()


def read_boxes(
    image: Image.Image, origin: tuple[int, int], scale: tuple[float, float]
) -> list[Box]:
    """OCR boxes of `image`, which shows the page from `origin` at `scale` (page px per px)."""
    reading = backend()._read(np.asarray(image.convert("RGB")), digest="", recent=())
    x0, y0 = origin
    sx, sy = scale
    return [
        Box(
            x0 + box.left * sx,
            y0 + box.top * sy,
            x0 + box.right * sx,
            y0 + box.bottom * sy,
            box.text.replace(" ", "").lower(),
        )
        for box in reading.boxes
    ]


def read_encoded(data: bytes, origin: tuple[int, int], scale: tuple[float, float]) -> list[Box]:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return read_boxes(image, origin, scale)


def words_in_boxes(words: tuple[Word, ...], boxes: list[Box]) -> set[int]:
    """Indexes of the words some box covering them holds."""
    found: set[int] = set()
    for index, word in enumerate(words):
        middle = (word.top + word.bottom) / 2
        for box in boxes:
            if (
                box.top <= middle <= box.bottom
                and box.left - _SLACK <= word.left
                and word.right <= box.right + _SLACK
                and word.text in box.text
            ):
                found.add(index)
                break
    return found


def words_in_text(
    words: tuple[Word, ...], text: str, region: tuple[int, int, int, int]
) -> set[int]:
    """Indexes of the words inside `region` (left, top, right, bottom) that `text` holds."""
    squeezed = text.replace(" ", "").lower()
    left, top, right, bottom = region
    return {
        index
        for index, word in enumerate(words)
        if word.left >= left
        and word.right <= right
        and word.top >= top
        and word.bottom <= bottom
        and word.text in squeezed
    }
