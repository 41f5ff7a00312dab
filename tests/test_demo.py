"""`visiongate demo` runs the mission end to end: real server, gate, images, OCR, payloads."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path
from unittest import mock

import pytest

from visiongate.cli import main
from visiongate.engine._vocabulary import CELL_COUNT, SOURCES

# slow: each test reads the output of one whole `visiongate demo` run
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo")
    buffer = io.StringIO()
    # An 80-column terminal: the summary is too wide for a table there, and becomes blocks.
    with contextlib.redirect_stdout(buffer), mock.patch.dict(os.environ, {"COLUMNS": "80"}):
        assert main(["demo", "--out", str(out)]) == 0
    return out, buffer.getvalue()


def test_demo_output_fits_the_terminal_and_cuts_at_words(demo_run: tuple[Path, str]) -> None:
    _out, stdout = demo_run
    too_wide = [line for line in stdout.splitlines() if len(line) > 80]
    assert not too_wide
    cut = [line for line in stdout.splitlines() if line.endswith("...")]
    assert cut and all(line[-4] != " " and line[-4].isalnum() for line in cut)  # after a word


def test_demo_prints_one_row_per_scenario_with_the_expected_lanes(
    demo_run: tuple[Path, str],
) -> None:
    _out, stdout = demo_run
    lines = stdout.splitlines()
    # Each scenario: `N. title`, then `   LANE by RULE, for FACTS`, then what the model gets.
    starts = [i for i, line in enumerate(lines) if re.match(r"\d\. ", line)]
    lanes = [lines[i + 1].split()[0] for i in starts]
    assert lanes == [
        "native",
        "text",
        "text",
        "text",
        "native",
        "native",
        "native",
        "native",
        "text",
    ]
    assert "OCR text" in stdout and "pytest" in stdout
    assert "cleaned:" in stdout


def test_demo_writes_every_payload_and_the_trace(demo_run: tuple[Path, str]) -> None:
    out, _stdout = demo_run
    payloads = sorted((out / "payloads").glob("*.json"))
    assert len(payloads) == 9
    records = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    assert len(records) == 9
    assert {record["source"] for record in records} == set(SOURCES)  # all four
    assert all(record["policy"]["name"] == "default" for record in records)


def test_demo_writes_the_table_picture_and_an_audit_report(demo_run: tuple[Path, str]) -> None:
    out, stdout = demo_run
    table, svg, report = (
        out / "decision-table.html",
        out / "decision-table.svg",
        out / "audit-report.html",
    )
    # A long temporary path (xdist's `popen-gw0/`) wraps after a `/` at 80 columns.
    unwrapped = re.sub(r"/\n +", "/", stdout)
    assert f"table:    {table}" in unwrapped
    assert f"report:   {report}" in unwrapped
    assert table.read_text().count('<g class="cell"') == CELL_COUNT
    assert svg.read_text().startswith("<svg")
    page = report.read_text()
    assert "9 decisions" in page
    # The demo's truncated PNG and its seventh image over the limit are refusals, linked.
    assert "Decisions with refused images: 2" in page
    assert page.count('href="#decision-') == 2


def test_text_lane_payloads_carry_no_pixels(demo_run: tuple[Path, str]) -> None:
    out, _stdout = demo_run
    for name in ("2-text-only-mcp", "3-text-only-capture", "4-mode-text"):
        payload = next((out / "payloads").glob(f"{name}.*.json")).read_text()
        assert "base64" not in payload and "image_url" not in payload, name
        assert "iVBORw0KGgo" not in payload  # the start of any base64 PNG


def test_native_payload_attaches_the_screenshot_within_budget(demo_run: tuple[Path, str]) -> None:
    out, _stdout = demo_run
    payload = json.loads(next((out / "payloads").glob("1-vision-model.*.json")).read_text())
    blocks = payload["messages"][0]["content"][0]["content"]
    images = [block for block in blocks if block["type"] == "image"]
    assert len(images) == 1
    assert len(images[0]["source"]["data"]) <= 262_144


def test_demo_timeout_ends_a_slow_server_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The example server cannot start and answer `initialize` within 10 ms.
    assert main(["demo", "--out", str(tmp_path), "--timeout", "0.01"]) == 2
    err = capsys.readouterr().err
    assert "visiongate demo: error: the MCP server `python -P -m " in err
    assert "did not answer `initialize` within 0.01s; the server was stopped" in err
    assert "Traceback" not in err
