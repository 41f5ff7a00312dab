"""The grid as one SVG picture: a cell per fact combination, coloured and named by lane.

Colour is never the only signal: each cell names its lane and its rule, the text lane is
also hatched, a changed cell in a diff has a heavy outline and an arrow (▲ became native,
▼ became text) and says what it was, and the invariants that check a cell are numbered in
it (◆1 2) and listed in the legend. Each cell is a `<g class="cell">` with `data-lane`,
`data-rule`, `data-cell` and, in a diff, `data-change`, and a `<title>` sentence that
browsers show on hover and screen readers read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..._vocabulary import FACTS
from ._grid import COLUMN_FACTS, LANE_WORDS, ROW_FACTS, Grid, GridCell
from ._svg import FONT, MONO, document, element, group, rect, text, title, wrap_identifier

MARGIN: Final = 16
HEADER_WIDTH: Final = 92
HEADER_HEIGHT: Final = 24
CELL_WIDTH: Final = 196
RULE_CHARACTERS: Final = 27
LEGEND_LINE: Final = 18

NATIVE_FILL: Final = "#cfe2f3"
NATIVE_BAR: Final = "#1f5fa8"
TEXT_FILL: Final = "url(#vg-hatch)"
TEXT_BAR: Final = "#8c8c8c"
LANE_CHANGE: Final = "#b3261e"
RULE_CHANGE: Final = "#8a5a00"
INK: Final = "#1b1b1b"
MUTED: Final = "#555555"

STYLE: Final = (
    "<style>"
    f".vg-grid text{{font-family:{FONT};fill:{INK}}}"
    f".vg-grid .vg-mono{{font-family:{MONO};font-size:10.5px}}"
    ".vg-grid .unchanged{opacity:.55}"
    "</style>"
)
DEFS: Final = (
    "<defs>"
    '<pattern id="vg-hatch" width="8" height="8" patternUnits="userSpaceOnUse" '
    'patternTransform="rotate(45)">'
    '<rect width="8" height="8" fill="#ffffff"/>'
    '<line x1="0" y1="0" x2="0" y2="8" stroke="#d9d9d9" stroke-width="3"/>'
    "</pattern>"
    "</defs>"
)


@dataclass(frozen=True)
class Layout:
    is_diff: bool

    @property
    def cell_height(self) -> int:
        return 86 if self.is_diff else 60

    @property
    def top(self) -> int:
        return 64

    @property
    def grid_left(self) -> int:
        return MARGIN + HEADER_WIDTH * len(ROW_FACTS)

    @property
    def body_top(self) -> int:
        return self.top + HEADER_HEIGHT * len(COLUMN_FACTS)


def lane_glyph(lane: str) -> str:
    return "●" if lane == "native" else "○"


def change_glyph(cell: GridCell) -> str:
    if cell.change == "lane":
        return "▲ " if cell.lane == "native" else "▼ "
    return "◇ " if cell.change == "rule" else ""


def render_grid_svg(grid: Grid, standalone: bool = True) -> str:
    """The whole picture: title, headers, every cell and the legend. Inside an HTML page
    (`standalone=False`) the page defines the hatch pattern once."""
    layout = Layout(grid.is_diff)
    rows, columns = grid.rows, grid.columns
    width = layout.grid_left + CELL_WIDTH * len(columns) + MARGIN
    body_bottom = layout.body_top + layout.cell_height * len(rows)
    legend, legend_height = _legend(grid, body_bottom + 24)
    height = body_bottom + 24 + legend_height + MARGIN
    parts = [
        STYLE,
        DEFS if standalone else "",
        rect(0, 0, width, height, fill="#ffffff"),
        text(MARGIN, 28, grid.title, font_size=18, font_weight="bold"),
        text(MARGIN, 48, grid.subtitle, font_size=12, fill=MUTED),
        *_column_headers(grid, layout),
        *_row_headers(grid, layout),
        group(
            (
                _cell(grid.at(row, column), layout, r, c, grid.is_diff)
                for r, row in enumerate(rows)
                for c, column in enumerate(columns)
            ),
            class_="cells",
        ),
        legend,
    ]
    label = f"{grid.title}: decision grid of {len(grid.cells)} cells. {grid.subtitle}"
    return document(width, height, label, parts, "vg-grid")


def _span(names: tuple[str, ...], level: int) -> int:
    size = 1
    for name in names[level + 1 :]:
        size *= len(FACTS[name])
    return size


def _column_headers(grid: Grid, layout: Layout) -> list[str]:
    parts = []
    columns = grid.columns
    for level, name in enumerate(COLUMN_FACTS):
        span = _span(COLUMN_FACTS, level)
        y = layout.top + HEADER_HEIGHT * level
        for start in range(0, len(columns), span):
            x = layout.grid_left + CELL_WIDTH * start
            value = columns[start][level]
            parts.append(
                rect(x, y, CELL_WIDTH * span, HEADER_HEIGHT, fill="#eef1f5", stroke="#ffffff")
            )
            parts.append(
                text(
                    x + CELL_WIDTH * span / 2,
                    y + 16,
                    f"{name}={value}",
                    font_size=12,
                    font_weight="bold",
                    text_anchor="middle",
                )
            )
    for level, name in enumerate(ROW_FACTS):
        x = MARGIN + HEADER_WIDTH * level
        y = layout.body_top - HEADER_HEIGHT
        parts.append(text(x + 8, y + 16, name, font_size=12, font_weight="bold", fill=MUTED))
    return parts


def _row_headers(grid: Grid, layout: Layout) -> list[str]:
    parts = []
    rows = grid.rows
    height = layout.cell_height
    for level, _name in enumerate(ROW_FACTS):
        span = _span(ROW_FACTS, level)
        x = MARGIN + HEADER_WIDTH * level
        for start in range(0, len(rows), span):
            y = layout.body_top + height * start
            parts.append(rect(x, y, HEADER_WIDTH, height * span, fill="#eef1f5", stroke="#ffffff"))
            parts.append(text(x + 8, y + 20, rows[start][level], font_size=13, font_weight="bold"))
    # A heavier line between groups of the first row fact, to read the table in blocks.
    block = _span(ROW_FACTS, 0)
    right = layout.grid_left + CELL_WIDTH * len(grid.columns)
    for start in range(block, len(rows), block):
        y = layout.body_top + height * start
        parts.append(
            element(
                "line",
                {"x1": MARGIN, "y1": y, "x2": right, "y2": y, "stroke": INK, "stroke-width": 2},
            )
        )
    return parts


def _cell(cell: GridCell, layout: Layout, row: int, column: int, is_diff: bool) -> str:
    x = layout.grid_left + CELL_WIDTH * column
    y = layout.body_top + layout.cell_height * row
    native = cell.lane == "native"
    parts = [
        title(cell.describe()),
        rect(
            x,
            y,
            CELL_WIDTH,
            layout.cell_height,
            fill=NATIVE_FILL if native else TEXT_FILL,
            stroke="#ffffff",
            stroke_width=1,
        ),
        rect(x, y, 6, layout.cell_height, fill=NATIVE_BAR if native else TEXT_BAR),
        text(x + 14, y + 19, _lane_line(cell), font_size=13, font_weight="bold"),
    ]
    if cell.invariants:
        marks = "◆" + " ".join(map(str, cell.invariants))
        parts.append(
            text(x + CELL_WIDTH - 8, y + 18, marks, font_size=10, text_anchor="end", fill=MUTED)
        )
    parts += _rule_lines(cell, x, y)
    if cell.change:
        parts += _change_marks(cell, x, y, layout.cell_height)
    css = "cell" if not is_diff or cell.change else "cell unchanged"
    return group(
        parts,
        class_=css,
        data_cell="/".join(cell.cell),
        data_lane=cell.lane,
        data_rule=cell.rule_label,
        data_change=cell.change or None,
    )


def _lane_line(cell: GridCell) -> str:
    return f"{change_glyph(cell)}{lane_glyph(cell.lane)} {cell.lane}"


def _rule_lines(cell: GridCell, x: float, y: float) -> list[str]:
    lines = wrap_identifier(cell.rule_label, RULE_CHARACTERS)
    if len(lines) > 2:
        lines = [lines[0], lines[1][: RULE_CHARACTERS - 1] + "…"]
    style = "italic" if cell.rule is None else None
    return [
        text(x + 14, y + 35 + 13 * index, line, class_="vg-mono", font_style=style)
        for index, line in enumerate(lines)
    ]


def _change_marks(cell: GridCell, x: float, y: float, height: int) -> list[str]:
    lane_change = cell.change == "lane"
    outline = rect(
        x + 1.5,
        y + 1.5,
        CELL_WIDTH - 3,
        height - 3,
        fill="none",
        stroke=LANE_CHANGE if lane_change else RULE_CHANGE,
        stroke_width=3 if lane_change else 2,
        stroke_dasharray=None if lane_change else "5 3",
    )
    before = f"was {cell.was_lane}: " if lane_change else "was "
    was = wrap_identifier(before + cell.was_rule_label, RULE_CHARACTERS)
    if len(was) > 2:
        was = [was[0], was[1][: RULE_CHARACTERS - 1] + "…"]
    return [
        outline,
        *(
            text(x + 14, y + 63 + 13 * index, line, class_="vg-mono", font_style="italic")
            for index, line in enumerate(was)
        ),
    ]


def _legend(grid: Grid, top: int) -> tuple[str, int]:
    entries: list[tuple[str, str]] = [
        ("native", f"● native: {LANE_WORDS['native']}"),
        ("text", f"○ text: {LANE_WORDS['text']}"),
        ("plain", "(default): no rule matches the cell; the policy's default lane decides"),
    ]
    if grid.invariants:
        entries.append(("plain", "◆n: the cell is checked by invariant n (listed below)"))
    if grid.is_diff:
        entries.append(
            ("lane-change", "▲ / ▼ heavy outline: the lane changes (became native / text)")
        )
        entries.append(("rule-change", "◇ dashed outline: same lane, another rule decides"))
    parts = [text(MARGIN, top, "Legend", font_size=13, font_weight="bold")]
    y = top + 8
    for kind, words in entries:
        parts.append(_swatch(kind, MARGIN, y))
        parts.append(text(MARGIN + 34, y + 13, words, font_size=12))
        y += LEGEND_LINE
    for note in grid.invariants:
        words = f"◆{note.number} {note.id}: expect {note.expect} ({note.cells} cells)"
        parts.append(text(MARGIN + 34, y + 13, words, font_size=12, font_family=MONO))
        y += LEGEND_LINE
    return group(parts, class_="legend"), y - top


def _swatch(kind: str, x: float, y: float) -> str:
    if kind == "native":
        return group(
            [rect(x, y + 2, 26, 14, fill=NATIVE_FILL), rect(x, y + 2, 4, 14, fill=NATIVE_BAR)]
        )
    if kind == "text":
        return group(
            [
                rect(x, y + 2, 26, 14, fill=TEXT_FILL, stroke="#bbbbbb"),
                rect(x, y + 2, 4, 14, fill=TEXT_BAR),
            ]
        )
    if kind == "lane-change":
        return rect(x + 1.5, y + 3.5, 23, 11, fill="none", stroke=LANE_CHANGE, stroke_width=3)
    if kind == "rule-change":
        return rect(
            x + 1,
            y + 3,
            24,
            12,
            fill="none",
            stroke=RULE_CHANGE,
            stroke_width=2,
            stroke_dasharray="5 3",
        )
    return ""
