"""Turn OCR boxes into lines of text in reading order, each with a rough position.

Reading order comes from a recursive XY-cut: the boxes are split into blocks at wide
horizontal gaps (bands such as a title bar, a menu, a body) and then at wide vertical gaps
(columns such as a sidebar, an editor, a panel), and within each block text is grouped into
lines by vertical overlap, top to bottom, then left to right. Without the cut, a sidebar
and an editor with different line spacing would be read interleaved, line by line.

Pure geometry, kept apart from the OCR engine so it can be tested without one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any, Final

ROW_OVERLAP: Final = 0.5
"""Two boxes share a row when their vertical overlap is at least this share of the shorter."""
BAND_GAP: Final = 0.5
"""A horizontal gap at least this many text heights tall may separate bands of text..."""
SURE_BAND_GAP: Final = 1.0
"""... and one this tall always does."""
STANDOUT: Final = 2.0
"""A band gap between the two must be this many times the group's typical gap.

Loosely spaced paragraphs have gaps of up to about half a text height, right at
`BAND_GAP`: the detector's boxes move by a pixel or two when anything on the screen changes,
and a fixed threshold there would flip the reading order of a whole page from one
screenshot to the next. A gap that merely matches its neighbours never cuts."""
COLUMN_GAP: Final = 3.0
"""A vertical gap this many text heights wide, down a whole band, separates columns."""
ROW_GAP: Final = 6.0
"""A gap this many text heights wide splits one row of a block into separate lines.

Wider than `COLUMN_GAP` because indented code after its line number is one line, not two.
"""

_ROWS: Final = ("top", "middle", "bottom")
_COLUMNS: Final = ("left", "center", "right")


@dataclass(frozen=True)
class TextBox:
    """One piece of text the OCR engine read, with its axis-aligned bounds in pixels."""

    left: float
    top: float
    right: float
    bottom: float
    text: str

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)


@dataclass(frozen=True)
class TextLine:
    """Text that reads as one line, where it sits, and its rough position on a 3x3 grid."""

    text: str
    left: float
    top: float
    right: float
    bottom: float
    position: str


def boxes_from_ocr(result: Iterable[Sequence[Any]] | None) -> list[TextBox]:
    """Boxes from RapidOCR's `[[points, text, score], ...]` (points: four `[x, y]`)."""
    boxes = []
    for points, raw_text, *_ in result or ():
        # The bundled recognition model is trained on Chinese and English text and now and
        # then reads ASCII punctuation as its fullwidth form (`，` for `,`); NFKC folds it back.
        text = unicodedata.normalize("NFKC", str(raw_text)).strip()
        xs = [float(point[0]) for point in points]
        ys = [float(point[1]) for point in points]
        if text:
            boxes.append(TextBox(min(xs), min(ys), max(xs), max(ys), text))
    return boxes


def grid_position(x: float, y: float, width: int, height: int) -> str:
    """`top-left` … `bottom-right` for a point, with `center` for the middle cell."""
    row = _ROWS[_third(y, height)]
    column = _COLUMNS[_third(x, width)]
    if row == "middle" and column == "center":
        return "center"
    return f"{row}-{column}"


def arrange_lines(boxes: Sequence[TextBox], width: int, height: int) -> list[TextLine]:
    """Lines in reading order: block by block, each top to bottom, then left to right."""
    if not boxes:
        return []
    text_height = median(b.height for b in boxes)
    lines = []
    for block in _blocks(boxes, text_height):
        for row in _group_rows(block):
            for segment in _split_row(row, ROW_GAP * text_height):
                lines.append(_to_line(segment, width, height))
    return lines


def _blocks(boxes: Sequence[TextBox], text_height: float) -> list[list[TextBox]]:
    """Recursive XY-cut, iterative so a page of many lines cannot exhaust the stack."""
    blocks: list[list[TextBox]] = []
    pending = [list(boxes)]
    while pending:
        group = pending.pop()
        parts = _cut(group, text_height)
        if len(parts) == 1:
            blocks.append(group)
        else:
            pending.extend(reversed(parts))
    return blocks


def _cut(group: list[TextBox], text_height: float) -> list[list[TextBox]]:
    bands = _split(
        group,
        vertical=True,
        min_gap=BAND_GAP * text_height,
        sure_gap=SURE_BAND_GAP * text_height,
    )
    if len(bands) > 1:
        return bands
    if _one_row(group):
        # Columns need rows to be columns of; gaps within a single row are `ROW_GAP`'s job.
        return [group]
    return _split(group, vertical=False, min_gap=COLUMN_GAP * text_height)


def _one_row(group: Sequence[TextBox]) -> bool:
    return min(b.bottom for b in group) > max(b.top for b in group)


def _split(
    group: list[TextBox], *, vertical: bool, min_gap: float, sure_gap: float | None = None
) -> list[list[TextBox]]:
    """`group` cut wherever no box covers a gap of at least `min_gap` along one axis.

    With `sure_gap`, a gap shorter than it cuts only if it also stands out (`STANDOUT`)
    from the group's typical gap.
    """

    def span(box: TextBox) -> tuple[float, float]:
        return (box.top, box.bottom) if vertical else (box.left, box.right)

    ordered = sorted(group, key=span)
    gaps = []
    reach = span(ordered[0])[1]
    for box in ordered[1:]:
        start, end = span(box)
        gaps.append(start - reach)
        reach = max(reach, end)
    positive = [gap for gap in gaps if gap > 0]
    bar = min_gap
    if sure_gap is not None:
        typical = median(positive) if positive else 0.0
        bar = max(min_gap, min(sure_gap, STANDOUT * typical))
    parts = [[ordered[0]]]
    for box, gap in zip(ordered[1:], gaps, strict=True):
        if gap >= bar:
            parts.append([])
        parts[-1].append(box)
    return parts


def _third(value: float, extent: int) -> int:
    if extent <= 0:
        return 1
    return min(2, max(0, int(3 * value / extent)))


def _group_rows(boxes: Sequence[TextBox]) -> list[list[TextBox]]:
    rows: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: ((b.top + b.bottom) / 2, b.left)):
        if rows and _shares_row(rows[-1], box):
            rows[-1].append(box)
        else:
            rows.append([box])
    return rows


def _shares_row(row: Sequence[TextBox], box: TextBox) -> bool:
    # Compare with the row's median span, not its union: a union grows with every box
    # and would chain a whole paragraph of slightly offset lines into one row.
    top = median(b.top for b in row)
    bottom = median(b.bottom for b in row)
    overlap = min(bottom, box.bottom) - max(top, box.top)
    return overlap >= ROW_OVERLAP * min(bottom - top, box.height)


def _split_row(row: Sequence[TextBox], limit: float) -> list[list[TextBox]]:
    ordered = sorted(row, key=lambda b: b.left)
    segments = [[ordered[0]]]
    for box in ordered[1:]:
        if box.left - segments[-1][-1].right > limit:
            segments.append([box])
        else:
            segments[-1].append(box)
    return segments


def _to_line(segment: Sequence[TextBox], width: int, height: int) -> TextLine:
    left = min(b.left for b in segment)
    top = min(b.top for b in segment)
    right = max(b.right for b in segment)
    bottom = max(b.bottom for b in segment)
    position = grid_position((left + right) / 2, (top + bottom) / 2, width, height)
    text = " ".join(b.text for b in segment)
    return TextLine(text, left, top, right, bottom, position)
