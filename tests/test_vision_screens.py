"""The parts of incremental OCR that need no OCR: change notes, the screen memory, and the
pixel geometry that finds changed regions and scrolls."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from visiongate.adapters.vision import ScreenMemory
from visiongate.adapters.vision._changes import change_note
from visiongate.adapters.vision._engine import Rect
from visiongate.adapters.vision._memory import Screen
from visiongate.adapters.vision._regions import changed_mask, changed_regions, vertical_shift

LINES = [f"line {n}" for n in range(1, 21)]


@pytest.mark.parametrize(
    ("before", "after", "scroll", "expected"),
    [
        (None, LINES, None, None),
        (LINES, LINES, None, "same text as the previous screenshot of this source"),
        (
            LINES[:11],
            [*LINES[:11], "$ ls", "README.md"],
            None,
            "changed since the previous screenshot of this source: lines 12–13 (2 of 13 lines)",
        ),
        (
            LINES,
            [*LINES[:3], "line four", *LINES[4:]],
            None,
            "changed since the previous screenshot of this source: line 4 (1 of 20 lines)",
        ),
        (
            LINES,
            [*LINES[:3], "x", *LINES[4:9], "y", *LINES[10:]],
            None,
            "changed since the previous screenshot of this source: lines 4, 10 (2 of 20 lines)",
        ),
        (
            LINES,
            [*LINES[3:], "new a", "new b"],
            72,
            "the view scrolled down by 72 px; changed since the previous screenshot of this "
            "source: lines 18–19 (2 of 19 lines); 3 lines of it no longer shown",
        ),
        (
            LINES,
            LINES[:19],
            None,
            "no line is new since the previous screenshot of this source; "
            "1 line of it no longer shown",
        ),
        (
            LINES,
            [f"other {n}" for n in range(20)],
            None,
            "most lines changed since the previous screenshot of this source",
        ),
        (
            LINES,
            LINES,
            -30,
            "the view scrolled up by 30 px; same text as the previous screenshot of this source",
        ),
    ],
    ids=["first", "same", "appended", "one", "two-apart", "scrolled", "removed", "most", "up"],
)
def test_change_note(
    before: list[str] | None, after: list[str], scroll: int | None, expected: str | None
) -> None:
    assert change_note(before, after, scroll) == expected


def screen(digest: str, size: tuple[int, int] = (4, 3)) -> Screen:
    pixels = np.zeros((size[1], size[0], 3), dtype=np.uint8)
    return Screen(pixels, digest, (), (), (1.0, 2000.0))


def test_memory_keeps_the_newest_first_and_at_most_keep() -> None:
    memory = ScreenMemory()
    for digest in "abc":
        memory.remember("computer_use", screen(digest), keep=2)
    assert [s.digest for s in memory.recent("computer_use")] == ["c", "b"]
    memory.remember("computer_use", screen("b"), keep=2)
    assert [s.digest for s in memory.recent("computer_use")] == ["b", "c"]
    assert memory.recent("browser") == ()


def test_memory_forgets_the_least_recently_used_source() -> None:
    memory = ScreenMemory(max_streams=2)
    memory.remember("a", screen("1"), keep=1)
    memory.remember("b", screen("2"), keep=1)
    memory.recent("a")  # a is now the most recently used
    memory.remember("c", screen("3"), keep=1)
    assert len(memory) == 2
    assert memory.recent("b") == ()
    assert [s.digest for s in memory.recent("a")] == ["1"]
    memory.forget("a")
    assert memory.recent("a") == () and len(memory) == 1
    memory.forget()
    assert len(memory) == 0


def test_memory_is_safe_to_share_between_threads() -> None:
    memory = ScreenMemory(max_streams=4)

    def work(name: str) -> None:
        for n in range(200):
            memory.remember(name, screen(f"{name}{n}"), keep=3)
            assert len(memory.recent(name)) <= 3

    threads = [threading.Thread(target=work, args=(f"s{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(memory) == 4


def textured(height: int, width: int, seed: int = 1) -> np.ndarray:
    """Rows of random 'text' on white, every row distinct: what a page of text looks like
    to the row matcher."""
    rng = np.random.default_rng(seed)
    image = np.full((height, width, 3), 255, dtype=np.uint8)
    ink = rng.random((height, width)) < 0.08
    image[ink] = 20
    return image


def test_a_vertical_scroll_is_found_beside_a_static_sidebar() -> None:
    old = textured(400, 600)
    new = old.copy()
    new[40:360, 200:] = old[76:396, 200:]  # the pane scrolled 36 px; the sidebar did not
    mask = changed_mask(new, old)
    assert vertical_shift(new, old, Rect(200, 40, 600, 360)) == 36
    assert vertical_shift(old, new, Rect(200, 40, 600, 360)) == -36
    assert not mask[:, :200].any()


def test_no_scroll_is_claimed_for_unrelated_content() -> None:
    old, new = textured(300, 512, seed=1), textured(300, 512, seed=2)
    assert vertical_shift(new, old, Rect(0, 0, 512, 300)) is None


def test_blank_rows_do_not_vote_for_a_scroll() -> None:
    old = np.full((300, 512, 3), 255, dtype=np.uint8)
    new = old.copy()
    new[100:110, 50:80] = 0  # a new mark on a blank page is a change, not a scroll
    assert vertical_shift(new, old, Rect(0, 0, 512, 300)) is None


def test_changed_pixels_become_padded_regions_one_per_line() -> None:
    old = np.full((200, 400, 3), 255, dtype=np.uint8)
    new = old.copy()
    new[20:30, 10:60] = 0  # two words of one line
    new[22:30, 70:120] = 0
    new[150:160, 300:320] = 0  # a line far below
    regions = changed_regions(changed_mask(new, old), pad_x=16, pad_y=8)
    assert len(regions) == 2
    first, second = regions
    assert first.left <= 10 - 8 and first.right >= 120 and first.top <= 20 and first.bottom >= 30
    assert second.top <= 150 and second.bottom >= 160 and second.left <= 300
    assert changed_regions(changed_mask(old, old), pad_x=16, pad_y=8) == []


def test_a_scroll_through_repeated_lines_is_not_mistaken_for_a_far_jump() -> None:
    # A terminal repeats its prompts and commands: most rows occur several times, and the
    # command just run can match, row for row, the same command at the top of the old
    # screen. Only rows that every line agrees on may decide the shift.
    rng = np.random.default_rng(7)
    blocks = [textured(25, 512, seed=seed) for seed in range(13)]
    order = [0, *rng.integers(1, 13, size=50).tolist()]
    page = np.concatenate([blocks[index] for index in order])
    old, new = page[:1000], page[50:1050].copy()
    new[-25:] = blocks[0]  # the newest line repeats the first line of the old screen
    assert vertical_shift(new, old, Rect(0, 0, 512, 1000)) == 50
