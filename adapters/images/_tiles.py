"""Tall and wide captures: overlapping tiles along the long axis instead of one sliver.

A browser's full-page capture (1280x12000) fitted whole to a 1568 px ceiling is 167x1568:
scale 0.13, no line of it legible. When the whole fit would fall below the policy's
`legibility_scale` and the capture is at least `TALL_ASPECT` times longer than it is wide (or
the other way round; screens are shrunk whole, a model clicks on one picture of a screen), it
is cut along its long axis into tiles that overlap by `OVERLAP` of their length, so a line cut
at one tile's edge is whole in the next. The tiles are drawn at the largest scale that still
lets the slots cover the whole capture, but never below the legibility scale (nor above 1, nor
above what the short side allows); what the slots cannot cover at that scale is left to the
text lane, cut into pieces of a tile's length so a backend can describe it legibly too.

Each tile is fitted on its own (codec, quality, budget) and says in its scale note which part
of the original it shows and how its coordinates map back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final, Literal

from ._types import Region

TALL_ASPECT: Final = 2.0
"""Long side over short side from which a capture counts as tall or wide: above every common
screen (16:10 is 1.6, 16:9 1.78), below ultrawide screens (21:9 is 2.39) and full pages."""
OVERLAP: Final = 0.05
"""Share of a tile's length it shares with the next: 78 px at 1:1, three lines of body text."""
MIN_STRIP_PX: Final = 13
"""The short side, once the whole image is fitted, below which it shows nothing: local OCR
read no word from a line of text in a strip 12 px tall (10 px type), 23% at 13 px, 92% at 14
and all of it at 16 (`bench/bench_images.py --legibility`). A strip the ceiling makes thinner
is refused; one that thin already is sent as it is."""

Axis = Literal["rows", "columns"]
Mode = Literal["tile", "shrink", "text"]


@dataclass(frozen=True)
class TallSettings:
    """What the stage needs to know about tiling one image."""

    mode: Mode = "tile"
    legibility_scale: float = 0.9
    slots: int = 1
    """Images this one may become."""
    budget_base64: int | None = None
    """Base64 characters all of its tiles may take together; None: each tile its own budget."""
    tile_budget_base64: int | None = None
    """Base64 characters one tile may take at most; None: the target's budget. A result's
    last image fitted in the turn's room still tiles at one slot's budget a tile: each tile
    takes a slot of its own."""


@dataclass(frozen=True)
class TileLayout:
    """Where the tiles of one capture go, and what they leave."""

    axis: Axis
    scale: float
    length: int
    """A tile's length along the axis, in original pixels."""
    tiles: tuple[Region, ...]
    uncovered: Region | None
    pieces: tuple[Region, ...]
    """`uncovered` in pieces of a tile's length, at most as many as there are slots."""

    original: tuple[int, int] = (0, 0)
    """The capture's size as displayed."""

    def keeping(self, kept: int, slots: int) -> TileLayout:
        """This layout with only its first `kept` tiles: the rest of the capture uncovered,
        in pieces of a tile's length (at most `slots` of them)."""
        tiles = self.tiles[:kept]
        width, height = self.original
        long_side, short_side = (height, width) if self.axis == "rows" else (width, height)
        covered = _end(self.axis, tiles[-1]) if tiles else 0
        if covered >= long_side:
            return replace(self, tiles=tiles, uncovered=None, pieces=())
        pieces = _spans(long_side - covered, self.length, slots)
        return replace(
            self,
            tiles=tiles,
            uncovered=_region(self.axis, (covered, long_side), short_side),
            pieces=tuple(
                _region(self.axis, (a + covered, b + covered), short_side) for a, b in pieces
            ),
        )

    def size(self, region: Region) -> tuple[int, int]:
        """The size a tile of `region` is drawn at."""
        scale = self.scale
        return max(1, round(region.width * scale)), max(1, round(region.height * scale))


def strip_reason(width: int, height: int, max_edge: int) -> str | None:
    """Why an image the ceiling would shrink too thin to show anything is refused, or None (one
    already that thin, or within the ceiling, is shown as it is)."""
    scale = max_edge / max(width, height)
    across = min(width, height)
    if (
        scale >= 1
        or max(width, height) < TALL_ASPECT * across
        or across < MIN_STRIP_PX
        or round(across * scale) >= MIN_STRIP_PX
    ):
        return None
    fitted = f"{max(1, round(width * scale))}x{max(1, round(height * scale))}"
    return (
        f"refused: a {width}x{height} strip would be {fitted} at the {max_edge} px ceiling, "
        f"under {MIN_STRIP_PX} px across: no fit of it shows anything"
    )


def tile_layout(
    width: int, height: int, max_edge: int, settings: TallSettings
) -> TileLayout | None:
    """The tiles for a `width` x `height` capture (as displayed), or None when it is fitted
    whole: not tall or wide, legible enough whole, or `shrink`."""
    long_side, short_side = max(width, height), min(width, height)
    whole_scale = min(1.0, max_edge / long_side)
    if (
        settings.mode == "shrink"
        or long_side < TALL_ASPECT * short_side
        or whole_scale >= settings.legibility_scale
    ):
        return None
    axis: Axis = "rows" if height >= width else "columns"
    slots = max(1, settings.slots)
    scale = _scale(long_side, short_side, max_edge, slots, settings.legibility_scale)
    length = min(long_side, math.floor(max_edge / scale))
    spans = _spans(long_side, length, slots) if settings.mode == "tile" else []
    tiles = tuple(_region(axis, span, short_side) for span in spans)
    layout = TileLayout(axis, scale, length, tiles, None, (), (width, height))
    return layout.keeping(len(tiles), slots)


def _scale(long_side: int, short_side: int, max_edge: int, slots: int, legible: float) -> float:
    """The largest scale at which `slots` tiles cover the whole, kept at or above `legible`,
    and at most 1 and what lets the short side fit the ceiling."""
    covering = max_edge * (slots - (slots - 1) * OVERLAP) / long_side
    return min(1.0, max_edge / short_side, max(covering, legible))


def _spans(total: int, length: int, slots: int) -> list[tuple[int, int]]:
    """Up to `slots` spans of `length` over [0, total): spread evenly with at least `OVERLAP`
    when they cover it all, else from the start, each overlapping the one before."""
    if length >= total:
        return [(0, total)]
    step = length - round(OVERLAP * length)
    needed = 1 + math.ceil((total - length) / step)
    if needed <= slots:
        starts = [round(i * (total - length) / (needed - 1)) for i in range(needed)]
    else:
        starts = [i * step for i in range(slots)]
    return [(start, start + length) for start in starts]


def _end(axis: Axis, region: Region) -> int:
    return region.bottom if axis == "rows" else region.right


def _region(axis: Axis, span: tuple[int, int], short_side: int) -> Region:
    start, end = span
    if axis == "rows":
        return Region(0, start, short_side, end)
    return Region(start, 0, end, short_side)


def tile_note(
    index: int,
    count: int,
    axis: Axis,
    region: Region,
    original: tuple[int, int],
    size: tuple[int, int],
) -> str:
    """One line for the model: which part of the original a tile shows, how to map it back."""
    width, height = size
    where = (
        f"tile {index} of {count}: {region.span(axis)} of the {original[0]}x{original[1]} original"
    )
    offset = region.top if axis == "rows" else region.left
    coordinate = "y" if axis == "rows" else "x"
    if (width, height) == (region.width, region.height):
        return f"{where} at 1:1; add {offset} to {coordinate} to map to the original"
    factor_x, factor_y = region.width / width, region.height / height
    return (
        f"{where}, downscaled to {width}x{height}; multiply x by {factor(factor_x)} and y by "
        f"{factor(factor_y)}, then add {offset} to {coordinate}, to map to the original"
    )


def factor(value: float) -> str:
    """Two decimals, more (up to four) only when they change where a click lands."""
    text = f"{value:.4f}"
    while text.endswith("0") and len(text.split(".")[1]) > 2:
        text = text[:-1]
    return text
