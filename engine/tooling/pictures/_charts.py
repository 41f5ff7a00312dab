"""Bar charts as static SVG: stacked horizontal bars, and stacked columns over time.

Each segment is a `<rect class="segment">` with `data-series` and `data-count` and a
`<title>` that names its row, series and number; totals are written as text beside the
bars, so a printout or a screen reader has the numbers without hovering. The text lane's
series is hatched (the pattern is defined once by the page), so the two series differ by
more than colour.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ._grid_svg import INK, MUTED, NATIVE_BAR, NATIVE_FILL, TEXT_BAR
from ._svg import FONT, document, element, group, rect, text, title

WIDTH: Final = 960
LABEL_WIDTH: Final = 290
ROW_HEIGHT: Final = 24
BAR_HEIGHT: Final = 16
LABEL_CHARACTERS: Final = 44


@dataclass(frozen=True)
class Series:
    name: str
    fill: str
    outline: str


NATIVE: Final = Series("native", NATIVE_FILL, NATIVE_BAR)
TEXT: Final = Series("text", "url(#vg-hatch)", TEXT_BAR)
LANES: Final = (NATIVE, TEXT)

Row = tuple[str, Mapping[str, int]]
"""A label and its count per series name."""


def count_text(value: int) -> str:
    return f"{value:,}"


def bytes_text(value: int) -> str:
    """`812 B`, `1.4 MB`: decimal units, as storage and bandwidth are billed."""
    amount = float(value)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if amount < 1000 or unit == "TB":
            return f"{value} B" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1000
    raise AssertionError("unreachable")


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "…"


def _legend(series: Sequence[Series], y: float) -> str:
    parts = []
    x = 0.0
    for item in series:
        parts.append(rect(x, y, 22, 12, fill=item.fill, stroke=item.outline))
        parts.append(text(x + 28, y + 11, item.name, font_size=12))
        x += 40 + 7.5 * len(item.name)
    return group(parts, class_="legend")


def stacked_bars(
    label: str,
    rows: Sequence[Row],
    series: Sequence[Series] = LANES,
    shown: Callable[[int], str] = count_text,
) -> str:
    """One horizontal bar per row, its segments stacked in `series` order, scaled to the
    largest row; the total (and each segment's share) is written after the bar."""
    height = 30 + ROW_HEIGHT * len(rows) + 8
    largest = max((sum(counts.values()) for _, counts in rows), default=0) or 1
    room = WIDTH - LABEL_WIDTH - 230
    parts = [f"<style>.vg-chart text{{font-family:{FONT};fill:{INK}}}</style>"]
    parts.append(_legend(series, 0))
    for index, (name, counts) in enumerate(rows):
        y = 30 + ROW_HEIGHT * index
        total = sum(counts.get(item.name, 0) for item in series)
        parts.append(text(0, y + 13, _short(name), font_size=12))
        x = float(LABEL_WIDTH)
        segments = []
        for item in series:
            value = counts.get(item.name, 0)
            if not value:
                continue
            width = max(room * value / largest, 1.0)
            share = f"{100 * value / total:.0f}%" if total else "-"
            segments.append(
                element(
                    "rect",
                    {
                        "class": "segment",
                        "data-series": item.name,
                        "data-count": value,
                        "x": x,
                        "y": y,
                        "width": width,
                        "height": BAR_HEIGHT,
                        "fill": item.fill,
                        "stroke": item.outline,
                    },
                    [title(f"{name}: {item.name} {shown(value)} ({share})")],
                )
            )
            x += width
        parts.append(group(segments, class_="bar", data_label=name, data_total=total))
        parts.append(
            text(x + 8, y + 13, _totals(counts, series, total, shown), font_size=12, fill=MUTED)
        )
    return document(WIDTH, height, label, parts, "vg-chart")


def _totals(
    counts: Mapping[str, int], series: Sequence[Series], total: int, shown: Callable[[int], str]
) -> str:
    first = counts.get(series[0].name, 0)
    share = f"{100 * first / total:.0f}% {series[0].name}" if total else "none"
    return f"{shown(total)} · {share}"


TICKS: Final = 4


def nice_step(value: int) -> int:
    """The axis step: 1, 2 or 5 times a power of ten, such that `TICKS` steps reach `value`
    (an axis that reads easily: 0, 2, 4, 6, 8)."""
    needed = max(value, 1) / TICKS
    power: int = 10 ** max(math.floor(math.log10(needed)), 0)
    for step in (1, 2, 5, 10):
        if step * power >= needed:
            return step * power
    return 10 * power


def columns_over_time(label: str, buckets: Sequence[Row], series: Sequence[Series] = LANES) -> str:
    """Stacked columns, one per time bucket in order (empty buckets included by the caller),
    with a value axis and every n-th bucket labelled so labels never overlap."""
    left, top, plot_height = 64.0, 30.0, 200.0
    plot_width = WIDTH - left - 16
    height = top + plot_height + 56
    tick_step = nice_step(max((sum(c.values()) for _, c in buckets), default=0))
    largest = tick_step * TICKS
    step = min(plot_width / max(len(buckets), 1), 60.0)
    parts = [f"<style>.vg-chart text{{font-family:{FONT};fill:{INK}}}</style>", _legend(series, 0)]
    for tick in range(TICKS + 1):
        value = tick_step * tick
        y = top + plot_height - plot_height * tick / TICKS
        parts.append(
            element(
                "line", {"x1": left, "y1": y, "x2": left + plot_width, "y2": y, "stroke": "#dddddd"}
            )
        )
        parts.append(text(left - 6, y + 4, count_text(value), font_size=11, text_anchor="end"))
    widest = max((len(name) for name, _ in buckets), default=0) * 6.5 + 12
    every = max(1, math.ceil(widest / step))
    for index, (name, counts) in enumerate(buckets):
        x = left + step * index
        parts.append(
            _column(name, counts, series, x, step, top + plot_height, plot_height, largest)
        )
        if index % every == 0:
            parts.append(
                text(x + step / 2, top + plot_height + 16, name, font_size=11, text_anchor="middle")
            )
    return document(WIDTH, height, label, parts, "vg-chart")


def _column(
    name: str,
    counts: Mapping[str, int],
    series: Sequence[Series],
    x: float,
    step: float,
    bottom: float,
    plot_height: float,
    largest: int,
) -> str:
    width = max(step * 0.8, 1.0)
    y = bottom
    segments = []
    for item in series:
        value = counts.get(item.name, 0)
        if not value:
            continue
        height = plot_height * value / largest
        y -= height
        segments.append(
            element(
                "rect",
                {
                    "class": "segment",
                    "data-series": item.name,
                    "data-count": value,
                    "x": x + step * 0.1,
                    "y": y,
                    "width": width,
                    "height": height,
                    "fill": item.fill,
                    "stroke": item.outline,
                    "stroke-width": 0.5,
                },
                [title(f"{name}: {item.name} {count_text(value)}")],
            )
        )
    total = sum(counts.values())
    return group(segments, class_="bucket", data_label=name, data_total=total)
