"""The pictures as data: golden SVG and Markdown of the shipped policies, the grid's cells
against the compiled table, the diff's marks, and the commands that write them.

What a browser shows is checked in `test_pictures_browser.py`. Regenerate the golden files
after an intended change with `VISIONGATE_UPDATE_GOLDEN=1 pytest tests/test_pictures.py`.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine import load_policy
from visiongate.engine._load import bundled_policy_names
from visiongate.engine._vocabulary import CELL_COUNT, FACTS, all_cells
from visiongate.engine.tooling._diff import diff_sources
from visiongate.engine.tooling.pictures import render_diff_picture, render_table_picture
from visiongate.engine.tooling.pictures._grid import diff_grid, policy_grid, responsible_rules
from visiongate.engine.tooling.pictures._svg import wrap_identifier

GOLDEN = Path(__file__).parent / "data" / "pictures"
SVG = "{http://www.w3.org/2000/svg}"
POLICIES = bundled_policy_names()


def _golden(name: str, produced: str) -> None:
    path = GOLDEN / name
    if os.environ.get("VISIONGATE_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(produced, encoding="utf-8")
    assert path.exists(), f"no golden file {path}: run with VISIONGATE_UPDATE_GOLDEN=1"
    assert produced == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def _slug(policy: str) -> str:
    return policy.replace("/", "-")


def svg_cells(svg: str) -> list[dict[str, str]]:
    """The `data-*` of every cell group of a grid SVG (it must parse as XML)."""
    root = ElementTree.fromstring(svg)
    return [
        {key.removeprefix("data-"): value for key, value in group.attrib.items()}
        for group in root.iter(f"{SVG}g")
        if group.get("class", "").split()[:1] == ["cell"]
    ]


@pytest.mark.parametrize("policy", POLICIES)
def test_golden_svg_of_each_shipped_policy(policy: str) -> None:
    _golden(f"{_slug(policy)}.svg", render_table_picture(load_policy(policy), "svg"))


@pytest.mark.parametrize("policy", POLICIES)
def test_golden_markdown_of_each_shipped_policy(policy: str) -> None:
    _golden(f"{_slug(policy)}.md", render_table_picture(load_policy(policy), "markdown"))


def test_golden_diff_markdown_for_a_pull_request() -> None:
    diff = diff_sources("default", "examples/strict-routes")
    _golden("diff-default-strict-routes.md", render_diff_picture(diff, "markdown"))


@pytest.mark.parametrize("policy", POLICIES)
def test_every_cell_is_drawn_once_with_its_lane_and_rule(policy: str) -> None:
    compiled = load_policy(policy)
    cells = svg_cells(render_table_picture(compiled, "svg"))
    assert len(cells) == CELL_COUNT
    drawn = {tuple(cell["cell"].split("/")): (cell["lane"], cell["rule"]) for cell in cells}
    assert drawn == {
        cell: (compiled.table[cell].lane, compiled.table[cell].rule or "(default)")
        for cell in all_cells()
    }


def test_the_grid_names_lanes_in_words_and_numbers_invariants() -> None:
    compiled = load_policy("default")
    svg = render_table_picture(compiled, "svg")
    root = ElementTree.fromstring(svg)
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "cell":
            words = "".join(group.itertext())
            assert group.get("data-lane") in words  # colour is never the only signal
    grid = policy_grid(compiled)
    text_mode = grid.cells[("text", "vision", "unset", "accepts")]
    assert 1 in text_mode.invariants  # text-mode-never-attaches is invariant 1 of the file
    for note in grid.invariants:
        assert f"◆{note.number} {note.id}: expect {note.expect}" in svg


def test_the_grid_follows_the_vocabulary() -> None:
    grid = policy_grid(load_policy("default"))
    assert len(grid.rows) == len(FACTS["mode"]) * len(FACTS["catalog"])
    assert len(grid.columns) == len(FACTS["aux"]) * len(FACTS["path"])
    assert len(grid.rows) * len(grid.columns) == CELL_COUNT


def test_markdown_is_a_table_with_a_row_per_mode_and_catalog() -> None:
    markdown = render_table_picture(load_policy("default"), "markdown")
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    header, body = rows[0], rows[1:]
    columns = header.count(" | ") + 1
    assert columns == 2 + len(FACTS["aux"]) * len(FACTS["path"])
    assert len(body) == len(FACTS["mode"]) * len(FACTS["catalog"])
    for row in body:
        assert len(re.split(r"(?<!\\)\|", row.strip().strip("|"))) == columns


def test_diff_marks_exactly_the_cells_that_change() -> None:
    diff = diff_sources("default", "examples/strict-routes")
    cells = svg_cells(render_diff_picture(diff, "svg"))
    changed = {c["cell"] for c in cells if c.get("change") == "lane"}
    renamed = {c["cell"] for c in cells if c.get("change") == "rule"}
    assert changed == {"/".join(change.cell) for change in diff.lane_changes}
    assert renamed == {"/".join(change.cell) for change in diff.rule_changes}
    assert changed and renamed
    responsible = responsible_rules(diff_grid(diff))
    assert sum(item.cells for item in responsible) == len(diff.lane_changes)
    assert {item.rule for item in responsible} == {c.new.rule for c in diff.lane_changes}


def test_diff_markdown_of_equal_policies_says_nothing_changed() -> None:
    markdown = render_diff_picture(diff_sources("default", "default"), "markdown")
    assert "Every cell keeps its lane and its rule." in markdown
    assert "| mode |" not in markdown


def test_diff_markdown_is_small_enough_for_a_comment() -> None:
    diff = diff_sources("examples/never-pixels", "examples/trust-unknown-aliases")
    markdown = render_diff_picture(diff, "markdown")
    assert len(markdown.encode()) < 16_000  # far below GitHub's 65,536-character comment
    assert "🔺" in markdown


def test_long_rule_ids_wrap_after_hyphens() -> None:
    assert wrap_identifier("native-mode-unverified-route-unknown-model", 27) == [
        "native-mode-unverified-",
        "route-unknown-model",
    ]
    assert wrap_identifier("x" * 30, 27) == ["x" * 27, "xxx"]


def test_explain_and_diff_print_pictures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--format", "svg"]) == 0
    assert len(svg_cells(capsys.readouterr().out)) == CELL_COUNT
    assert main(["explain", "--policy", "examples/never-pixels", "--format", "markdown"]) == 0
    assert "always-text" in capsys.readouterr().out
    assert main(["explain", "--format", "html"]) == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")
    assert main(["diff", "default", "examples/strict-routes", "--format", "markdown"]) == 1
    assert "Rules responsible" in capsys.readouterr().out
    assert main(["diff", "default", "default", "--format", "html"]) == 0
    assert "<!DOCTYPE html>" in capsys.readouterr().out


def test_the_pages_load_nothing_and_run_nothing() -> None:
    page = render_table_picture(load_policy("default"), "html")
    assert "default-src 'none'" in page
    assert "<script" not in page
    # The only URL is the SVG namespace, which names and does not load.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_each_policy_page_shows_its_grid_picture() -> None:
    from visiongate.engine.tooling._discover import find_policies
    from visiongate.engine.tooling._docs import MARKER, generate_pages
    from visiongate.engine.tooling._project import find_project

    project = find_project(Path(__file__).parent.parent)
    generated = generate_pages(list(find_policies(project).files), project.root)
    pages = {page.relative_path: page.text for page in generated}
    for policy in POLICIES:
        page, picture = pages[f"{policy}.md"], pages[f"{policy}.svg"]
        assert f"]({Path(policy).name}.svg)" in page  # a link relative to the page
        assert picture.startswith(MARKER)
        assert len(svg_cells(picture.removeprefix(MARKER))) == CELL_COUNT


def test_chart_axes_and_byte_counts_read_easily() -> None:
    from visiongate.engine.tooling.pictures._charts import bytes_text, nice_step

    assert [nice_step(v) for v in (0, 4, 7, 9, 41, 401)] == [1, 1, 2, 5, 20, 200]
    assert [bytes_text(v) for v in (812, 1_400_000, 3_800_000_000)] == ["812 B", "1.4 MB", "3.8 GB"]
