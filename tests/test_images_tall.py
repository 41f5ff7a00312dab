"""Tall and wide captures as tiles (issue 27): a 1280x12000 page came out as one 167x1568 sliver."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest
from _image_samples import decode, encode, screenshot, target

from visiongate.adapters.images import process_images
from visiongate.adapters.images._tiles import OVERLAP, TallSettings, tile_layout
from visiongate.adapters.images._types import Region
from visiongate.engine._settings import NativeSettings

TILE = NativeSettings()


@cache
def page(width: int, height: int) -> bytes:
    return encode(screenshot(width, height, seed=3), "PNG")


# --- where the tiles go --------------------------------------------------------------------

LAYOUTS = [
    # (size, slots, scale, tiles (start, end) along the long axis, uncovered span or None)
    ((1280, 6000), 4, 1.0, [(0, 1568), (1477, 3045), (2955, 4523), (4432, 6000)], None),
    ((1280, 12000), 4, 0.9, [(0, 1742), (1655, 3397), (3310, 5052), (4965, 6707)], (6707, 12000)),
    ((1280, 12000), 1, 0.9, [(0, 1742)], (1742, 12000)),
    ((1280, 2800), 4, 1.0, [(0, 1568), (1232, 2800)], None),
    ((3440, 1440), 4, 1.0, [(0, 1568), (936, 2504), (1872, 3440)], None),
    (
        (1920, 20000),
        4,
        1568 / 1920,
        [(0, 1920), (1824, 3744), (3648, 5568), (5472, 7392)],
        (7392, 20000),
    ),
]


@pytest.mark.parametrize(("size", "slots", "scale", "spans", "rest"), LAYOUTS)
def test_tiles_cover_what_the_slots_can_at_a_legible_scale(
    size: tuple[int, int],
    slots: int,
    scale: float,
    spans: list[tuple[int, int]],
    rest: tuple[int, int] | None,
) -> None:
    layout = tile_layout(*size, 1568, TallSettings(slots=slots))
    assert layout is not None
    assert layout.scale == pytest.approx(scale)
    long = layout.axis == "rows"
    assert [(r.top, r.bottom) if long else (r.left, r.right) for r in layout.tiles] == spans
    for before, after in itertools.pairwise(spans):
        assert before[1] - after[0] >= round(OVERLAP * (spans[0][1] - spans[0][0]))  # overlap
    if rest is None:
        assert layout.uncovered is None and layout.pieces == ()
    else:
        region = layout.uncovered
        assert region is not None
        assert ((region.top, region.bottom) if long else (region.left, region.right)) == rest
        assert 1 <= len(layout.pieces) <= slots
    for region in layout.tiles:
        assert max(layout.size(region)) <= 1568


@pytest.mark.parametrize(
    ("size", "settings"),
    [
        ((2560, 1440), TallSettings(slots=4)),  # a screen: shrunk whole, a model clicks on one
        ((1920, 1080), TallSettings(slots=4)),
        ((1000, 1500), TallSettings(slots=4)),  # within the ceiling
        ((1280, 12000), TallSettings(mode="shrink", slots=4)),
        ((1280, 3000), TallSettings(legibility_scale=0.5, slots=4)),  # 0.52 whole: legible enough
    ],
)
def test_screens_legible_captures_and_shrink_are_fitted_whole(
    size: tuple[int, int], settings: TallSettings
) -> None:
    assert tile_layout(*size, 1568, settings) is None


def test_text_mode_leaves_the_whole_capture_to_the_text_lane_in_legible_pieces() -> None:
    layout = tile_layout(1280, 12000, 1568, TallSettings(mode="text", slots=4))
    assert layout is not None and layout.tiles == ()
    assert layout.uncovered == Region(0, 0, 1280, 12000)
    assert [(piece.top, piece.bottom) for piece in layout.pieces][:2] == [(0, 1742), (1655, 3397)]


# --- through the stage ---------------------------------------------------------------------


def test_a_1280x6000_page_is_four_tiles_at_1_to_1_that_map_back_to_the_original() -> None:
    data = page(1280, 6000)
    batch = process_images([data], target(), TILE)
    assert batch.uncovered == () and batch.attached_indexes == (0, 0, 0, 0)
    original = np.asarray(decode(data).convert("RGB"), dtype=np.int16)
    for number, tile in enumerate(batch.attached, start=1):
        region = tile.region
        assert region is not None and (tile.width, tile.height) == (1280, 1568)
        assert tile.scale_note == (
            f"tile {number} of 4: rows {region.top}-{region.bottom} of the 1280x6000 original "
            f"at 1:1; add {region.top} to y to map to the original"
        )
        shown = np.asarray(decode(tile.data).convert("RGB"), dtype=np.int16)
        crop = original[region.top : region.bottom]
        assert np.abs(shown - crop).mean() < 6  # the same pixels, up to lossy coding
    assert batch.attached[-1].region == Region(0, 4432, 1280, 6000)


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_a_1280x12000_page_sends_legible_tiles_and_names_the_rows_it_leaves() -> None:
    batch = process_images([page(1280, 12000)], target(), TILE)
    assert len(batch.attached) == 4
    first = batch.attached[0]
    assert (first.width, first.height) == (1152, 1568)
    assert first.scale_note == (
        "tile 1 of 4: rows 0-1742 of the 1280x12000 original, downscaled to 1152x1568; "
        "multiply x by 1.1111 and y by 1.111, then add 0 to y, to map to the original"
    )
    ((index, part),) = batch.uncovered
    assert index == 0 and part.region == Region(0, 6707, 1280, 12000)
    assert part.note == (
        "rows 6707-12000 of the 1280x12000 original are not attached: 4 tile(s) at scale "
        "0.90, the least that keeps text legible, take every image slot left in this result"
    )


def test_shrink_keeps_the_old_single_sliver() -> None:
    settings = NativeSettings(tall_images="shrink")
    batch = process_images([page(1280, 12000)], target(), settings)
    (image,) = batch.attached
    assert (image.width, image.height) == (167, 1568) and image.region is None
    assert batch.uncovered == ()


def test_text_mode_attaches_nothing_and_leaves_it_all_to_the_text_lane() -> None:
    batch = process_images([page(1280, 12000)], target(), NativeSettings(tall_images="text"))
    assert batch.attached == ()
    ((_, part),) = batch.uncovered
    assert part.whole and "`tall_images: text`" in part.reason


def test_tiles_share_the_slots_with_the_other_images_of_the_result() -> None:
    small = encode(screenshot(400, 300), "PNG")
    batch = process_images([page(1280, 12000), small], target(), TILE)
    # Two images in one window of four slots: each may take two.
    assert batch.attached_indexes == (0, 0, 1)
    assert batch.uncovered[0][1].region.top == 3397


def test_tiles_stay_within_the_result_budget() -> None:
    budget = 300_000
    batch = process_images([page(1280, 6000)], target(), TILE, result_budget=budget)
    assert sum(len(tile.base64) for tile in batch.attached) <= budget
    assert batch.attached  # shared, not refused
