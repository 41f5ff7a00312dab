"""What bench_ocr.py measures with: character error rate, Tesseract, the changed share.

CER against the ground truth is matched by place, not by order: every string drawn goes to
the line read where its centre lies, and each line read is compared (edit distance, runs
of spaces folded) with the strings that landed in it; a string no line covers counts as
deleted, a line over no string as inserted. Reading order is a layout question that both
engines share here (Tesseract's word boxes go through the same layout code as RapidOCR's),
and the generator's tight glyph boxes would be ordered differently from any detector's.
Whether incremental reads keep the order of full reads is measured apart, by `errors` of
one text against the other, in order.
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


def errors_by_place(lines: list[TextLine], truth: tuple[TextBox, ...]) -> Errors:
    """Character edits from the lines read to the strings drawn, matched by place."""
    owned: dict[int, list[TextBox]] = {index: [] for index in range(len(lines))}
    total = Errors(0, 0)
    for box in truth:
        x, y = (box.left + box.right) / 2, (box.top + box.bottom) / 2
        holders = [i for i, line in enumerate(lines) if _holds(line, x, y)]
        if holders:
            owner = min(holders, key=lambda i: _area(lines[i]))
            owned[owner].append(box)
        else:
            missing = _fold(box.text)
            total += Errors(len(missing), len(missing))
    for index, boxes in owned.items():
        expected = _fold(" ".join(box.text for box in sorted(boxes, key=lambda b: b.left)))
        total += Errors(edit_distance(_fold(lines[index].text), expected), len(expected))
    return total


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
