"""The grid as a Markdown table that GitHub and GitLab render: for `explain` and for `diff`.

Markdown tables carry no colour, so each cell says its lane in words with a coloured square
in front (🟦 native, ⬜ text) and its rule in code; invariants are numbered (◆1) as in the
SVG. The diff keeps unchanged cells to their lane alone, so the changes stand out and the
comment stays small (a PR comment of the whole 54-cell grid is about 4 KB).
"""

from __future__ import annotations

from typing import Final

from .._diff import PolicyDiff
from ._grid import (
    COLUMN_FACTS,
    LANE_WORDS,
    ROW_FACTS,
    Grid,
    GridCell,
    diff_grid,
    responsible_rules,
)

SQUARES: Final = {"native": "🟦", "text": "⬜"}


def _lane(lane: str) -> str:
    return f"{SQUARES.get(lane, '')} **{lane}**" if lane == "native" else f"{SQUARES[lane]} {lane}"


def _code(value: str) -> str:
    return f"`{value}`"


def _escape(value: str) -> str:
    """Table-safe text: a `|` would end the cell."""
    return value.replace("|", "\\|")


def _header(grid: Grid) -> list[str]:
    columns = [
        "<br>".join(f"{name}={value}" for name, value in zip(COLUMN_FACTS, column, strict=True))
        for column in grid.columns
    ]
    return [
        "| " + " | ".join([*ROW_FACTS, *columns]) + " |",
        "|" + "---|" * (len(ROW_FACTS) + len(columns)),
    ]


def _marks(cell: GridCell) -> str:
    return " ◆" + " ".join(map(str, cell.invariants)) if cell.invariants else ""


def _policy_cell(cell: GridCell) -> str:
    rule = _code(cell.rule) if cell.rule else "_(default)_"
    return f"{_lane(cell.lane)}{_marks(cell)}<br>{rule}"


def _diff_cell(cell: GridCell) -> str:
    if cell.change == "lane":
        arrow = "🔺" if cell.lane == "native" else "🔻"
        return (
            f"{arrow} {_lane(cell.lane)}<br>{_code(cell.rule_label)}<br>"
            f"_was {cell.was_lane}, {_code(cell.was_rule_label)}_"
        )
    if cell.change == "rule":
        was = f"_was {_code(cell.was_rule_label)}_"
        return f"🔸 {_lane(cell.lane)}<br>{_code(cell.rule_label)}<br>{was}"
    return _lane(cell.lane)


def _rows(grid: Grid) -> list[str]:
    draw = _diff_cell if grid.is_diff else _policy_cell
    lines = []
    previous: tuple[str, ...] = ()
    for row in grid.rows:
        # Repeat a row fact only when it changes, as a reader scans the table in blocks.
        shown = [
            f"**{value}**" if previous[: index + 1] != row[: index + 1] else ""
            for index, value in enumerate(row)
        ]
        previous = row
        cells = [draw(grid.at(row, column)) for column in grid.columns]
        lines.append("| " + " | ".join([*shown, *cells]) + " |")
    return lines


def _legend(grid: Grid) -> list[str]:
    words = [
        f"{SQUARES['native']} **native**: {LANE_WORDS['native']}",
        f"{SQUARES['text']} text: {LANE_WORDS['text']}",
        "_(default)_: no rule matches; the default lane decides",
    ]
    if grid.is_diff:
        words += ["🔺 became native", "🔻 became text", "🔸 same lane, another rule"]
    lines = ["", "Legend: " + " · ".join(words)]
    if grid.invariants and not grid.is_diff:
        lines += ["", "Invariants (◆n in a cell: checked by invariant n):", ""]
        lines += [
            f"{note.number}. {_code(note.id)}: expect {note.expect} ({note.cells} cells)"
            for note in grid.invariants
        ]
    return lines


def render_policy_markdown(grid: Grid) -> str:
    lines = [f"### {_escape(grid.title)}", "", _escape(grid.subtitle), ""]
    lines += [*_header(grid), *_rows(grid), *_legend(grid)]
    return "\n".join(lines) + "\n"


def render_diff_markdown(diff: PolicyDiff) -> str:
    """A PR comment: the summary, the grid with changes marked, the rules responsible and the
    settings that change."""
    grid = diff_grid(diff)
    lines = [f"### visiongate {_escape(grid.title)}", "", f"**{_escape(grid.subtitle)}**", ""]
    if grid.changed("lane") or grid.changed("rule"):
        lines += [*_header(grid), *_rows(grid), *_legend(grid), ""]
    else:
        lines += ["Every cell keeps its lane and its rule.", ""]
    responsible = responsible_rules(grid)
    if responsible:
        lines += ["Rules responsible for the lane changes:", ""]
        lines += ["| rule now | rule before | lane | cells |", "|---|---|---|---|"]
        lines += [
            f"| {_code(item.rule)} | {_code(item.was_rule)} | {item.was_lane} → "
            f"{_lane(item.lane)} | {item.cells} |"
            for item in responsible
        ]
        lines.append("")
    if diff.setting_changes:
        lines += ["Settings that change:", "", "| setting | old | new |", "|---|---|---|"]
        lines += [
            f"| {_code(key)} | {_code(_escape(before))} | {_code(_escape(after))} |"
            for key, before, after in diff.setting_changes
        ]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
