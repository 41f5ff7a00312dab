"""What bench_ocr.py measures with: character error rate, Tesseract, the changed share.

CER is the edit distance between the lines read and the ground truth, both joined in
reading order (runs of spaces folded), over the length of the truth. The truth is put in
the reading order of the read itself (`truth_in_order`: every string drawn goes to the line
read that holds its centre), so CER measures what was read, not how the page was ordered:
the generator's tight glyph boxes would be ordered differently from any detector's.
Tesseract's word boxes go through the same layout code as RapidOCR's.

Order is measured apart (`order_agreement`): the share of pairs of lines that an
incremental read puts in the same order as the full read of the same screenshot.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

import numpy as np
from PIL import Image

from visiongate.adapters.vision._layout import TextBox, TextLine, arrange_lines

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Errors:
    """Edits against the truth and the truth's length; CER is their ratio."""

    edits: int
    length: int

    def __add__(self, other: Errors) -> Errors:
        return Errors(self.edits + other.edits, self.length + other.length)

    @property
    def cer(self) -> float:
        return self.edits / max(1, self.length)


def errors(read: list[str], truth: list[str]) -> Errors:
    """Character edits from `read` to `truth`, both lines in reading order."""
    a, b = _joined(read), _joined(truth)
    return Errors(edit_distance(a, b), len(b))


def truth_in_order(reference: list[TextLine], truth: tuple[TextBox, ...]) -> list[str]:
    """The strings drawn, one line per line of `reference`, in its reading order.

    Each string goes to the reference line that holds its centre (the smallest, if several
    do); strings no line holds follow at the end, so they count as missed.
    """
    owned: list[list[TextBox]] = [[] for _ in reference]
    missed: list[str] = []
    for box in truth:
        x, y = (box.left + box.right) / 2, (box.top + box.bottom) / 2
        holders = [i for i, line in enumerate(reference) if _holds(line, x, y)]
        if holders:
            owned[min(holders, key=lambda i: _area(reference[i]))].append(box)
        else:
            missed.append(box.text)
    lines = [" ".join(box.text for box in sorted(boxes, key=lambda b: b.left)) for boxes in owned]
    return [*lines, *missed]


def order_agreement(lines: list[TextLine], reference: list[TextLine]) -> tuple[int, int]:
    """Pairs of `lines` in the opposite order from `reference`, and pairs compared.

    Each line is placed at the reference line that holds its centre; lines no reference
    line holds are left out.
    """
    places = []
    for line in lines:
        x, y = (line.left + line.right) / 2, (line.top + line.bottom) / 2
        holders = [i for i, other in enumerate(reference) if _holds(other, x, y)]
        if holders:
            places.append(min(holders, key=lambda i: _area(reference[i])))
    pairs = len(places) * (len(places) - 1) // 2
    swapped = sum(
        1 for i, first in enumerate(places) for second in places[i + 1 :] if second < first
    )
    return swapped, pairs


def _holds(line: TextLine, x: float, y: float) -> bool:
    return line.left - 2 <= x <= line.right + 2 and line.top - 2 <= y <= line.bottom + 2


def _area(line: TextLine) -> float:
    return (line.right - line.left) * (line.bottom - line.top)


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _joined(lines: list[str]) -> str:
    folded = (_SPACES.sub(" ", line).strip() for line in lines)
    return "\n".join(line for line in folded if line)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    target = np.array([ord(char) for char in b], dtype=np.int64)
    columns = np.arange(len(b) + 1, dtype=np.int64)
    previous = columns.copy()
    for row, char in enumerate(a, start=1):
        substitute = previous[:-1] + (target != ord(char))
        delete = previous[1:] + 1
        best = np.empty_like(previous)
        best[0] = row
        best[1:] = np.minimum(substitute, delete)
        # Insertions: row[j] = min over k <= j of best[k] + (j - k).
        previous = np.minimum.accumulate(best - columns) + columns
    return int(previous[-1])


def changed_share(png: bytes, previous: bytes | None, tile: int = 8) -> float:
    """Share of the screen's tiles with any changed pixel (1.0 for the first screenshot)."""
    if previous is None:
        return 1.0
    a, b = _pixels(png), _pixels(previous)
    if a.shape != b.shape:
        return 1.0
    differs = np.any(a != b, axis=2)
    height, width = differs.shape
    grid = differs[: height - height % tile, : width - width % tile]
    tiles = grid.reshape(height // tile, tile, width // tile, tile).any(axis=(1, 3))
    return float(tiles.mean())


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def tesseract_version() -> str | None:
    """`tesseract 5.3.0`, or None when the binary is not installed."""
    binary = shutil.which("tesseract")
    if binary is None:
        return None
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).splitlines()[0].strip()


def tesseract_read(png: bytes, size: tuple[int, int]) -> tuple[list[TextLine], float]:
    """Lines Tesseract reads (its word boxes through our layout) and the wall time in ms."""
    started = time.perf_counter()
    done = subprocess.run(
        ["tesseract", "stdin", "stdout", "-l", "eng", "--psm", "3", "tsv"],
        input=png,
        capture_output=True,
        check=True,
    )
    elapsed = (time.perf_counter() - started) * 1000
    boxes = []
    for row in done.stdout.decode("utf-8", "replace").splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) < 12 or fields[0] != "5" or not fields[11].strip():
            continue
        left, top, width, height = (float(value) for value in fields[6:10])
        boxes.append(TextBox(left, top, left + width, top + height, fields[11].strip()))
    return arrange_lines(boxes, *size), elapsed
