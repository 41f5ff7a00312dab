"""The demo's summary as a person's terminal shows it: within its width, cut at words.

A table whose columns fit is printed as it is; a wider one has its prose columns narrowed,
widest first, with their cells wrapped at spaces and slashes (never inside a word); when even
that does not fit, each row becomes a short block of lines.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from typing import Final

GAP: Final = 2
NARROWEST: Final = 16
"""A prose column is never wrapped narrower than this (nor than its longest word)."""
_PIECES: Final = re.compile(r"[^ /]*[ /]*")


def terminal_width() -> int:
    """`COLUMNS`, else the terminal's width, else 80 (output to a file or a pipe)."""
    return shutil.get_terminal_size((80, 24)).columns


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, cut after a whole word, with `...` if cut."""
    if len(text) <= width:
        return text
    room = text[: max(width - 3, 1)]
    head = room.rsplit(" ", 1)[0] if " " in room.strip() else room
    return head.rstrip(" ,;:") + "..."


def render_table(
    rows: Sequence[Sequence[str]],
    width: int | None = None,
    *,
    prose: Sequence[int] = (),
    block: Callable[[Sequence[str]], list[str]] | None = None,
) -> str:
    """`rows` (a header, then the body) within `width` columns. The `prose` columns wrap at
    words to make room, each down to `NARROWEST`; when that is not enough, each body row
    becomes the lines `block` makes of it (default: its cells as `name: value` lines)."""
    width = width or terminal_width()
    count = len(rows[0])
    widths = [max(len(row[index]) for row in rows) for index in range(count)]
    floors = [
        max(NARROWEST, max(_longest_piece(row[index]) for row in rows))
        if index in prose
        else widths[index]
        for index in range(count)
    ]
    while sum(widths) + GAP * (count - 1) > width:
        narrowable = [index for index in range(count) if widths[index] > floors[index]]
        if not narrowable:
            return _blocks(rows, width, block)
        widths[max(narrowable, key=lambda index: widths[index])] -= 1
    lines: list[str] = []
    for row in rows:
        cells = [_wrap(cell, cell_width) for cell, cell_width in zip(row, widths, strict=True)]
        for depth in range(max(len(cell) for cell in cells)):
            parts = [
                (cell[depth] if depth < len(cell) else "").ljust(cell_width)
                for cell, cell_width in zip(cells, widths, strict=True)
            ]
            lines.append((" " * GAP).join(parts).rstrip())
    return "\n".join(lines)


def wrap(text: str, width: int, indent: str = "") -> str:
    """`text` wrapped at words within `width`, lines after the first indented."""
    lines = _wrap(text, max(width - len(indent), NARROWEST))
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _pieces(text: str) -> list[str]:
    """Words with the space, slash or hyphen after them: where a cell may wrap."""
    return [piece for piece in _PIECES.findall(text) if piece]


def _longest_piece(text: str) -> int:
    return max((len(piece.rstrip()) for piece in _pieces(text)), default=0)


def _wrap(text: str, width: int) -> list[str]:
    lines = [""]
    for piece in _pieces(text):
        if lines[-1] and len(lines[-1] + piece.rstrip()) > width:
            lines.append("")
        lines[-1] += piece
    return [line.rstrip() for line in lines]


def _blocks(
    rows: Sequence[Sequence[str]], width: int, block: Callable[[Sequence[str]], list[str]] | None
) -> str:
    """One block per body row: a title line, then its lines wrapped at words, indented."""
    header, *body = rows
    lines: list[str] = []
    for row in body:
        made = block(row) if block is not None else _named(header, row)
        lines.append(wrap(made[0], width, "   "))
        lines += [wrap(f"   {line}", width, "     ") for line in made[1:]]
    return "\n".join(lines)


def _named(header: Sequence[str], row: Sequence[str]) -> list[str]:
    return [f"{row[0]}. {row[1]}", *(f"{n}: {v}" for n, v in zip(header[2:], row[2:], strict=True))]
