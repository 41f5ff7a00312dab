"""The HTML shell every page shares: one file, no script, no network, and it prints.

The Content-Security-Policy forbids every load (`default-src 'none'`): styles are inline and
pictures are inline SVG, so the page reads the same from a CI artifact, an e-mail attachment
or a machine without network, and nothing it shows can call home.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Final

from ._grid_svg import DEFS

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS: Final = """
:root { color-scheme: light; --ink: #1b1b1b; --muted: #555; --rule: #d0d7de; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif;
  color: var(--ink); background: #fff; margin: 0 auto; padding: 24px; max-width: 1480px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid var(--rule);
  padding-bottom: 4px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
p.lead { color: var(--muted); margin: 0 0 16px; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { border: 1px solid var(--rule); padding: 4px 8px; text-align: left;
  vertical-align: top; }
th { background: #eef1f5; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 8px 0 16px; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 13px; }
.facts { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 8px 0 16px; padding: 0;
  list-style: none; }
.facts li { border-left: 4px solid var(--rule); padding-left: 8px; }
.facts strong { display: block; font-size: 20px; }
.finding { border-left-color: #b3261e; }
.ok { border-left-color: #2e7d32; }
.lane-native, .lane-text { white-space: nowrap; padding: 0 3px; }
.lane-native { background: #cfe2f3; }
.lane-text { background: #f3f3f3; }
svg.defs { position: absolute; width: 0; height: 0; }
@media print {
  @page { size: A4 landscape; margin: 12mm; }
  body { padding: 0; max-width: none; font-size: 10pt; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2, h3, figcaption { break-after: avoid; }
  figure, table, tr { break-inside: avoid; }
  figure svg { width: auto; height: auto; max-height: 160mm; }
  a { color: inherit; text-decoration: none; }
}
"""


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def html_page(title: str, body: Iterable[str]) -> str:
    """A whole page: `body` is already HTML."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            f'<svg class="defs" aria-hidden="true" focusable="false">{DEFS}</svg>',
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def table(head: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """A table whose cells are already HTML; columns in `numeric` are right-aligned."""
    header = "".join(
        f'<th scope="col"{_numeric(i, numeric)}>{cell}</th>' for i, cell in enumerate(head)
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{_numeric(i, numeric)}>{cell}</td>" for i, cell in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def _numeric(index: int, numeric: Sequence[int]) -> str:
    return ' class="number"' if index in numeric else ""


def figure(picture: str, caption: str) -> str:
    return f"<figure>{picture}<figcaption>{esc(caption)}</figcaption></figure>"


def code(value: object) -> str:
    return f"<code>{esc(value)}</code>"


def lane(value: str) -> str:
    """A lane as a word with its colour behind it (the word carries the meaning)."""
    glyph = "●" if value == "native" else "○"
    return f'<span class="lane-{esc(value)}">{glyph} {esc(value)}</span>'
