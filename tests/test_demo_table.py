"""The demo's summary within the terminal's width, cut at words (issue 28)."""

from __future__ import annotations

import pytest

from visiongate._demo import SUMMARY_PROSE, summary_block
from visiongate._demo_table import cut, render_table

ROWS = [
    ["#", "scenario", "mode/catalog/aux/path", "lane", "rule", "images", "bytes",
     "what the model gets"],
    ["1", "vision model, MCP screenshot", "auto/vision/unset/accepts", "native",
     "auto-vision-model", "1 of 1 attached", "460K->185K", "pixels, scale note, MEDIA: path"],
    ["2", "text-only model, computer-use", "auto/no_vision/unset/unverified", "text",
     "auto-model-not-known-to-see", "1 kept out", "-",
     "OCR text: Terminal - ~/src/shop - pytest tests/test_checkout.py"],
]  # fmt: skip


def _words(text: str) -> set[str]:
    return {word.strip(",:;.") for word in text.replace("/", " ").split()}


@pytest.mark.parametrize("width", [200, 160, 140, 120, 100, 80, 60, 40])
def test_the_summary_fits_and_never_cuts_a_word(width: int) -> None:
    text = render_table(ROWS, width, prose=SUMMARY_PROSE, block=summary_block)
    assert max(len(line) for line in text.splitlines()) <= width
    body = _words(" ".join(cell for row in ROWS[1:] for cell in row))
    assert body <= _words(text)  # every word of every scenario whole, somewhere


def test_a_wide_terminal_gets_one_line_per_row() -> None:
    assert len(render_table(ROWS, 200, prose=SUMMARY_PROSE).splitlines()) == 3


def test_a_middle_width_wraps_the_prose_columns_only() -> None:
    text = render_table(ROWS, 140, prose=SUMMARY_PROSE, block=summary_block)
    lines = text.splitlines()
    assert len(lines) > 3 and lines[0].startswith("#  scenario")  # still a table
    assert "auto-model-not-known-to-see" in text and "auto/no_vision/unset/unverified" in text


def test_a_narrow_terminal_gets_a_block_per_row() -> None:
    text = render_table(ROWS, 80, prose=SUMMARY_PROSE, block=summary_block)
    assert text.splitlines()[:3] == [
        "1. vision model, MCP screenshot",
        "   native by auto-vision-model, for auto/vision/unset/accepts",
        "   1 of 1 attached, 460K->185K: pixels, scale note, MEDIA: path",
    ]


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("refused: png image is truncated or corrupt", 30, "refused: png image is..."),
        ("short", 30, "short"),
        ("averyveryverylongwordwithoutspaces", 12, "averyvery..."),
    ],
)
def test_cut_keeps_whole_words(text: str, width: int, shown: str) -> None:
    assert cut(text, width) == shown and len(cut(text, width)) <= width
