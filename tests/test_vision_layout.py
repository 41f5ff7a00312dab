"""Reading order and rough positions from OCR boxes, without an OCR engine."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from visiongate.adapters.vision._layout import (
    TextBox,
    arrange_lines,
    boxes_from_ocr,
    grid_position,
)


def box(left: float, top: float, text: str, width: float = 80, height: float = 20) -> TextBox:
    return TextBox(left, top, left + width, top + height, text)


def test_grid_names_all_nine_cells() -> None:
    names = [grid_position(x, y, 300, 300) for y in (50, 150, 250) for x in (50, 150, 250)]
    assert names == [
        "top-left",
        "top-center",
        "top-right",
        "middle-left",
        "center",
        "middle-right",
        "bottom-left",
        "bottom-center",
        "bottom-right",
    ]


def test_slightly_offset_words_share_a_line_in_left_to_right_order() -> None:
    words = [box(200, 103, "world"), box(100, 100, "hello"), box(300, 98, "again")]
    [line] = arrange_lines(words, 1000, 1000)
    assert line.text == "hello world again"


def test_far_apart_text_on_one_row_stays_separate() -> None:
    row = [box(10, 10, "File"), box(900, 12, "Help")]
    lines = arrange_lines(row, 1000, 600)
    assert [(line.text, line.position) for line in lines] == [
        ("File", "top-left"),
        ("Help", "top-right"),
    ]


def test_rows_go_top_to_bottom_then_left_to_right() -> None:
    words = [
        box(500, 300, "Cancel"),
        box(100, 40, "Title"),
        box(100, 300, "OK"),
        box(100, 160, "Body text"),
    ]
    lines = arrange_lines(words, 1000, 400)
    assert [line.text for line in lines] == ["Title", "Body text", "OK", "Cancel"]


def test_lines_that_overlap_by_less_than_half_stay_apart() -> None:
    # Tight line spacing: the second line starts 60% of a height below the first.
    upper, lower = box(0, 100, "upper", height=20), box(0, 112, "lower", height=20)
    assert [line.text for line in arrange_lines([lower, upper], 500, 500)] == [
        "upper",
        "lower",
    ]


def test_columns_with_different_line_spacing_are_read_one_after_the_other() -> None:
    # A title band, then a sidebar (28 px pitch) beside an editor (22 px pitch): read row by
    # row, the two would interleave; the XY-cut reads the title, the sidebar, the editor.
    title = box(400, 0, "Title", width=200)
    sidebar = [box(10, 60 + 28 * index, f"side{index}") for index in range(8)]
    editor = [box(300, 60 + 22 * index, f"code{index}", width=500) for index in range(10)]
    lines = arrange_lines([*editor, title, *sidebar], 1000, 400)
    assert [line.text for line in lines] == [
        "Title",
        *(f"side{index}" for index in range(8)),
        *(f"code{index}" for index in range(10)),
    ]


def test_a_loose_paragraph_beside_a_form_keeps_its_order_when_boxes_wobble() -> None:
    # Form labels every 56 px beside help text every 30 px: the help text's gaps sit right at
    # half a text height, and the detector moves boxes by a pixel when anything on screen
    # changes. Whatever the wobble, the order must not flip between rows and columns.
    orders = set()
    for wobble in (-1.0, 0.0, 1.0):
        labels = [box(10, 56 * index, f"label{index}") for index in range(6)]
        help_text = [
            box(500, 30 * index + (wobble if index % 2 else 0), f"help{index}", width=300)
            for index in range(11)
        ]
        lines = arrange_lines([*help_text, *labels], 1000, 400)
        orders.add(tuple(line.text for line in lines))
    assert orders == {
        (*(f"label{index}" for index in range(6)), *(f"help{index}" for index in range(11)))
    }


def test_indented_code_stays_on_its_line_number() -> None:
    words = [box(0, 0, "6", width=15), box(100, 0, "invoice = get(invoice_id)", width=300)]
    assert [line.text for line in arrange_lines(words, 1000, 100)] == [
        "6 invoice = get(invoice_id)"
    ]


def test_fullwidth_punctuation_is_folded_to_ascii() -> None:
    points = [[0.0, 0.0], [50.0, 0.0], [50.0, 20.0], [0.0, 20.0]]
    [word] = boxes_from_ocr([[points, "total(self，id）", 0.9]])
    assert word.text == "total(self,id)"


def test_rapidocr_result_shape() -> None:
    result = [
        [[[10.0, 5.0], [90.0, 6.0], [90.0, 30.0], [10.0, 29.0]], "Save", 0.99],
        [[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], "   ", 0.9],
    ]
    assert boxes_from_ocr(result) == [TextBox(10.0, 5.0, 90.0, 30.0, "Save")]
    assert boxes_from_ocr(None) == []


words = st.builds(
    box,
    left=st.floats(0, 1800, allow_nan=False),
    top=st.floats(0, 1000, allow_nan=False),
    text=st.text(alphabet="abcdefgh", min_size=1, max_size=8),
    width=st.floats(5, 400, allow_nan=False),
    height=st.floats(8, 60, allow_nan=False),
)


@given(st.lists(words, max_size=40))
def test_every_word_lands_in_exactly_one_line(boxes: list[TextBox]) -> None:
    lines = arrange_lines(boxes, 1920, 1080)
    assert sorted(w for line in lines for w in line.text.split(" ")) == sorted(
        b.text for b in boxes
    )


@given(st.lists(words, min_size=1, max_size=40))
def test_positions_are_grid_names(boxes: list[TextBox]) -> None:
    allowed = {grid_position(x, y, 3, 3) for x in range(3) for y in range(3)}
    assert {line.position for line in arrange_lines(boxes, 1920, 1080)} <= allowed
