"""Read a screenshot by re-reading only what changed since the previous one of its source.

The text boxes of the previous screenshot are carried over where their pixels (with a
margin around them) are exactly the same, either in place or moved by a vertical scroll.
Every other change is grouped into regions, each grown to whole text lines, and only those
regions are read, at the scale a full read would use. A box is kept only when its pixels
prove it unchanged, so the result is what a full read of the new screenshot gives, up to
the small differences of reading a region with less context around it. (Full reads do not
agree exactly either: the detector pools over the whole image, so its boxes move by a
pixel or two when anything on the screen changes.)

Falls back to a full read when there is nothing to compare with (first screenshot, another
size, other settings) or when most of the screen changed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import median
from typing import Final, Literal

import numpy as np

from ._engine import Pixels, Rect, TextReader, read_regions
from ._layout import TextBox
from ._memory import Screen
from ._regions import (
    Mask,
    bounding,
    changed_bounds,
    changed_mask,
    changed_regions,
    merge_rects,
    overlap,
    same_pixels,
    shifted_mask,
    vertical_shift,
)

FULL_SHARE: Final = 0.5
"""When the regions to re-read cover more than this share of the screen, read it all."""
SCROLL_SHARE: Final = 0.1
"""Scrolling is looked for only when the changed area spans at least this share."""
PAD_X: Final = 1.5
"""A change closer than this many text heights beside a box may join its line."""
PAD_Y: Final = 0.0
"""The same, above and below. Zero: a box already reaches a little past its glyphs, and
lines never join vertically; any pad would reach into the descenders of the line above,
which a scroll replaces, and re-read every line that scrolled."""
GROUP_Y: Final = 0.5
"""Changed pixels closer than this many text heights vertically belong to one region."""
CORE: Final = 0.25
"""A region takes over a box when it reaches past this share of the box's height."""
DEFAULT_TEXT_HEIGHT: Final = 20.0
MAX_ROUNDS: Final = 3
MAX_ASPECT: Final = 8.0
"""Detection on a strip wider than this many times its height goes wrong (it found nothing
in a 1075x90 strip holding a URL); RapidOCR pads such images, here they get more rows."""
MIN_CONTEXT: Final = 48

Mode = Literal["full", "repeat", "incremental"]


@dataclass(frozen=True)
class Reading:
    """The text boxes of one screenshot and how they were obtained."""

    boxes: tuple[TextBox, ...]
    mode: Mode
    """`full` read, `repeat` of a remembered screenshot, or `incremental`."""
    regions: tuple[Rect, ...] = ()
    """What was read again (incremental only)."""
    scroll: int | None = None
    """Rows the content moved up (negative: down), when a scroll was recognised."""
    share: float = 1.0
    """Share of the screen the detector looked at: 1 for a full read, 0 for a repeat."""


def read_screen(
    reader: TextReader,
    pixels: Pixels,
    scale: float,
    *,
    setup: tuple[float, ...],
    digest: str,
    recent: Sequence[Screen],
) -> Reading:
    """The text boxes of `pixels`, re-using the remembered screenshots in `recent`."""
    height, width = pixels.shape[:2]
    usable = [screen for screen in recent if screen.size == (width, height)]
    usable = [screen for screen in usable if screen.setup == setup]
    for screen in usable:
        if screen.digest == digest:
            return Reading(screen.boxes, "repeat", share=0.0)
    if not usable:
        return full_read(reader, pixels, scale)
    previous = usable[0]
    if np.array_equal(pixels, previous.pixels):  # a memcmp, well before any mask
        return Reading(previous.boxes, "repeat", share=0.0)
    mask = changed_mask(pixels, previous.pixels)
    return _update(reader, pixels, scale, previous, mask)


def full_read(reader: TextReader, pixels: Pixels, scale: float) -> Reading:
    height, width = pixels.shape[:2]
    boxes = read_regions(reader, pixels, [Rect(0, 0, width, height)], scale)[0]
    return Reading(tuple(boxes), "full")


@dataclass(frozen=True)
class _Margins:
    """Distances in pixels, from the median text height of the previous screenshot."""

    check_x: int
    """A box is kept only if nothing changed this near beside it (words may join its line)."""
    check_y: int
    """... or this near above or below it (lines never join vertically, so this is small)."""
    group_x: int
    """Changed pixels this near each other form one region (the words of one line)."""
    group_y: int
    """... and this near vertically (accents, dots and underlines of one line)."""
    context_x: int
    """Detection sees this much around a region, so no line is cut at its edge."""
    context_y: int

    @classmethod
    def for_boxes(cls, boxes: Sequence[TextBox]) -> _Margins:
        text = median(box.height for box in boxes) if boxes else DEFAULT_TEXT_HEIGHT
        return cls(
            check_x=math.ceil(PAD_X * text),
            check_y=math.ceil(PAD_Y * text),
            group_x=math.ceil(PAD_X * text),
            group_y=math.ceil(GROUP_Y * text),
            context_x=math.ceil(max(16.0, 2 * text)),
            context_y=math.ceil(max(16.0, text)),
        )


def _update(
    reader: TextReader, pixels: Pixels, scale: float, previous: Screen, mask: Mask
) -> Reading:
    height, width = pixels.shape[:2]
    margins = _Margins.for_boxes(previous.boxes)
    shift = _scroll(pixels, previous.pixels, mask)
    residual = mask if shift is None else mask & shifted_mask(pixels, previous.pixels, shift)
    kept, dirty = _carry_over(pixels, previous, shift, (mask, residual), margins)
    regions = changed_regions(residual, margins.group_x, margins.group_y) + dirty
    for _ in range(MAX_ROUNDS):
        regions, kept = _absorb(regions, kept, width, height)
        views = _views(regions, kept, margins, width, height)
        share = sum(view.area for view, _ in views) / (width * height)
        if share > FULL_SHARE:
            return full_read(reader, pixels, scale)
        contexts = [view for view, _ in views]
        owners = [owned for _, owned in views]
        found = read_regions(reader, pixels, contexts, scale, owners=owners)
        fresh = [box for boxes in found for box in boxes]
        clashes = [old for old in kept if any(_clash(old, new) for new in fresh)]
        if not clashes:
            boxes = tuple(kept) + tuple(fresh)
            return Reading(boxes, "incremental", tuple(regions), shift, share)
        # A fresh box reaches over a kept one: the two were one line; read it whole.
        regions = regions + [_rect(box) for box in clashes]
    return full_read(reader, pixels, scale)


def _views(
    regions: Sequence[Rect], kept: Sequence[TextBox], margins: _Margins, width: int, height: int
) -> list[tuple[Rect, list[Rect]]]:
    """What the detector looks at, each with the regions it reads there.

    Each region gets a context (`_context`); overlapping contexts are joined, so no pixel
    goes through detection twice and the regions of one joined context are read in one pass.
    """
    views = [
        (
            _context(region.grown(margins.context_x, margins.context_y), kept, width, height),
            [region],
        )
        for region in regions
    ]
    while (pair := _overlapping_pair(views)) is not None:
        first, second = pair
        (seen, owned), (other, other_owned) = views[first], views[second]
        union = _context(bounding([seen, other]), kept, width, height)
        views[first] = (union, owned + other_owned)
        del views[second]
    return views


def _overlapping_pair(views: Sequence[tuple[Rect, list[Rect]]]) -> tuple[int, int] | None:
    for first in range(len(views)):
        for second in range(first + 1, len(views)):
            if overlap(views[first][0], views[second][0]):
                return first, second
    return None


def _context(area: Rect, kept: Sequence[TextBox], width: int, height: int) -> Rect:
    """What detection sees around a region: `area`, grown so that no kept line is cut at its
    edge (glyphs cut by a crop's edge upset the detector) and to a shape the detector reads
    well (at most `MAX_ASPECT` to one, at least `MIN_CONTEXT` pixels a side)."""
    rect = area.clipped(width, height)
    for _ in range(MAX_ROUNDS):
        rect = _proportioned(rect, width, height)
        cut = [box for box in kept if _cuts(rect, box)]
        if not cut:
            break
        rect = bounding([rect, *(_rect(box) for box in cut)]).clipped(width, height)
    return rect


def _proportioned(rect: Rect, width: int, height: int) -> Rect:
    wide, tall = rect.right - rect.left, rect.bottom - rect.top
    need_tall = max(MIN_CONTEXT, math.ceil(wide / MAX_ASPECT)) - tall
    need_wide = max(MIN_CONTEXT, math.ceil(tall / MAX_ASPECT)) - wide
    grown = rect.grown(max(0, need_wide + 1) // 2, max(0, need_tall + 1) // 2)
    # Against an edge of the screen, grow the other way instead.
    shift_x = max(0, -grown.left) - max(0, grown.right - width)
    shift_y = max(0, -grown.top) - max(0, grown.bottom - height)
    moved = Rect(
        grown.left + shift_x, grown.top + shift_y, grown.right + shift_x, grown.bottom + shift_y
    )
    return moved.clipped(width, height)


def _cuts(rect: Rect, box: TextBox) -> bool:
    """True when `box` lies partly inside `rect` and partly outside."""
    inside = (
        rect.left < box.right
        and box.left < rect.right
        and rect.top < box.bottom
        and box.top < rect.bottom
    )
    within = (
        rect.left <= box.left
        and box.right <= rect.right
        and rect.top <= box.top
        and box.bottom <= rect.bottom
    )
    return inside and not within


def _scroll(new: Pixels, old: Pixels, mask: Mask) -> int | None:
    """The vertical shift of what changed, if the change is big enough to look for one."""
    height, width = mask.shape[:2]
    area = changed_bounds(mask)
    if area is None or area.area < SCROLL_SHARE * width * height:
        return None
    return vertical_shift(new, old, area)


def _carry_over(
    new: Pixels,
    previous: Screen,
    shift: int | None,
    masks: tuple[Mask, Mask],
    margins: _Margins,
) -> tuple[list[TextBox], list[Rect]]:
    """Boxes whose surroundings are unchanged, in place and where a scroll took them, and
    the areas to read again.

    Each place is checked on its own: a repeated line (a terminal's prompt) can stay in
    place and also show, scrolled, a few lines higher. Where a box is not kept in place, it
    is read again if something there changed that the scroll does not explain; where it is
    not kept scrolled, it is read again if anything changed there, since its text may still
    show with only its surroundings changed (a line scrolled next to a static header).
    """
    height, width = new.shape[:2]
    old = previous.pixels
    changed, residual = masks
    kept: list[TextBox] = []
    dirty: list[Rect] = []
    for box in previous.boxes:
        around = _rect(box).grown(margins.check_x, margins.check_y).clipped(width, height)
        if same_pixels(new, old, around, around):
            kept.append(box)
        elif residual[around.top : around.bottom, around.left : around.right].any():
            dirty.append(_rect(box).clipped(width, height))
        if shift is None:
            continue
        moved_box = replace(box, top=box.top - shift, bottom=box.bottom - shift)
        moved = Rect(around.left, around.top - shift, around.right, around.bottom - shift)
        if moved.top >= 0 and moved.bottom <= height and same_pixels(new, old, moved, around):
            kept.append(moved_box)
            continue
        place = _rect(moved_box).clipped(width, height)
        # Where nothing changed in place (a static header a line scrolled under), the text
        # cannot show; anywhere else, read it again.
        if place.area and changed[place.top : place.bottom, place.left : place.right].any():
            dirty.append(place)
    return _distinct(kept), [rect for rect in dirty if rect.area > 0]


def _distinct(boxes: list[TextBox]) -> list[TextBox]:
    """`boxes` without those that land on one already taken.

    A repeated line (a prompt in a terminal) can stay in place and also have its twin
    scrolled onto it; both were checked pixel for pixel, so either one is right.
    """
    distinct: list[TextBox] = []
    for box in boxes:
        if not any(_clash(box, other) for other in distinct):
            distinct.append(box)
    return distinct


def _absorb(
    regions: list[Rect], kept: list[TextBox], width: int, height: int
) -> tuple[list[Rect], list[TextBox]]:
    """Regions grown to the whole of every kept box they reach into, and the boxes left.

    Only a reach past a box's margin counts, so a region does not creep line by line
    through a paragraph whose boxes overlap a little.
    """
    changed = True
    while changed:
        changed = False
        regions = merge_rects(regions, width, height)
        remaining = []
        for box in kept:
            hits = [region for region in regions if _touches_core(region, box)]
            if not hits:
                remaining.append(box)
                continue
            regions = [region for region in regions if region not in hits]
            regions.append(bounding([*hits, _rect(box)]).clipped(width, height))
            changed = True
        kept = remaining
    return regions, kept


def _touches_core(region: Rect, box: TextBox) -> bool:
    inset = CORE * box.height
    return (
        region.left < box.right
        and box.left < region.right
        and region.top < box.bottom - inset
        and box.top + inset < region.bottom
    )


def _clash(old: TextBox, new: TextBox) -> bool:
    """True when two boxes overlap by more than a third of the smaller one."""
    overlap_x = min(old.right, new.right) - max(old.left, new.left)
    overlap_y = min(old.bottom, new.bottom) - max(old.top, new.top)
    if overlap_x <= 0 or overlap_y <= 0:
        return False
    smaller = min(_area(old), _area(new))
    return overlap_x * overlap_y > smaller / 3


def _area(box: TextBox) -> float:
    return max(box.right - box.left, 1.0) * box.height


def _rect(box: TextBox) -> Rect:
    return Rect(
        math.floor(box.left),
        math.floor(box.top),
        math.ceil(box.right) + 1,
        math.ceil(box.bottom) + 1,
    )
