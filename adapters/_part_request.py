"""A part of an image the model asks to see: a region in the original's coordinates, or rows.

What a tool result sent is the whole image fitted to the ceiling (or tiles of a tall page and
a description of the rest); a model that needs a detail asks for the part, like a computer-use
zoom: `region` (left, top, width, height in the original's pixels, as displayed) or, for a tall
page, `rows_from` (the rows from that offset, as many as a view shows at full legibility: a
square of the page's width, at least `ROWS_SPAN` rows). The answer is that part of the cached
original, cut at 1:1 and fitted again (`images._part`), never the tiles already sent.

Every bad request is refused with one clear line: a region outside the image, a zero or
negative size, an absurd zoom (a part under `MIN_PART_PX` a side, which no fit can show more
of than the original already did), rows past the last one, or both ways at once. Nothing here
loads the image stage: the proxy checks a request before the stage is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

MIN_PART_PX: Final = 8
"""Smallest side a part may have: 8 px of the original is a 196x zoom to fill a 1568 px view."""
ROWS_SPAN: Final = 1568
"""Rows a `rows_from` request shows of a page at most this wide: the default ceiling at 1:1."""
_REGION_KEYS: Final = ("left", "top", "width", "height")


class PartError(ValueError):
    """A part request that cannot be answered; the message is one lower-case line."""


@dataclass(frozen=True)
class PartRequest:
    """What the model asked for: a region, or the rows from an offset (exactly one)."""

    region: tuple[int, int, int, int] | None = None
    """(left, top, width, height) in the original's pixels."""
    rows_from: int | None = None

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> PartRequest | None:
        """The request in a tool call's `region` / `rows_from` arguments; None when neither is
        given; `PartError` when they are malformed."""
        region, rows = arguments.get("region"), arguments.get("rows_from")
        if region is None and rows is None:
            return None
        if region is not None and rows is not None:
            raise PartError("pass `region` or `rows_from`, not both")
        if rows is not None:
            return cls(rows_from=_whole_number("rows_from", rows))
        if not isinstance(region, Mapping):
            raise PartError("`region` must be an object with `left`, `top`, `width` and `height`")
        missing = [key for key in _REGION_KEYS if key not in region]
        if missing:
            raise PartError(f"`region` lacks `{missing[0]}` (it takes left, top, width, height)")
        left, top, width, height = (_whole_number(f"region.{k}", region[k]) for k in _REGION_KEYS)
        return cls(region=(left, top, width, height))

    def within(self, width: int, height: int) -> tuple[int, int, int, int]:
        """The part of a `width` x `height` original this asks for, as (left, top, right,
        bottom); `PartError` if there is none."""
        size = f"{width}x{height}"
        if self.rows_from is not None:
            start = self.rows_from
            if start < 0:
                raise PartError(f"`rows_from` must be 0 or more, not `{start}`")
            if start >= height:
                raise PartError(f"`rows_from` `{start}` is past the last row of the {size} image")
            return (0, start, width, min(height, start + max(ROWS_SPAN, width)))
        assert self.region is not None
        left, top, part_width, part_height = self.region
        if part_width <= 0 or part_height <= 0:
            raise PartError(
                f"a region must have a positive width and height, not {part_width}x{part_height}"
            )
        if left < 0 or top < 0 or left + part_width > width or top + part_height > height:
            raise PartError(
                f"the region {part_width}x{part_height} at ({left}, {top}) is not inside the "
                f"{size} original (x 0-{width}, y 0-{height})"
            )
        if min(part_width, part_height) < MIN_PART_PX:
            raise PartError(
                f"a {part_width}x{part_height} region is too small to show more than was sent "
                f"(an absurd zoom): ask for at least {MIN_PART_PX}x{MIN_PART_PX} px"
            )
        return (left, top, left + part_width, top + part_height)


def _whole_number(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise PartError(f"`{name}` must be a whole number of pixels")
    return int(value)
