"""The audit report: what the aggregate carries for it, and the page it becomes.

The aggregate is checked against counts made directly from the records; the page against
the aggregate. Scale: the page of 100 times more records is about the same size, because it
is drawn from the aggregate alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _fleet_trace import fleet_records, write_fleet_trace

from visiongate.cli import main
from visiongate.engine.tooling.audit import _parallel
from visiongate.engine.tooling.audit._aggregate import Query, aggregate
from visiongate.engine.tooling.audit._inputs import expand
from visiongate.engine.tooling.audit._parallel import aggregate_in_parallel
from visiongate.engine.tooling.audit._result import AuditResult
from visiongate.engine.tooling.pictures import render_audit_report
from visiongate.engine.tooling.pictures._audit_data import time_buckets


def _audit(path: Path) -> AuditResult:
    return aggregate(expand([str(path)]))


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fleet_trace(tmp_path_factory.mktemp("fleet") / "trace.jsonl", 3000)


def _expected(records: list[dict[str, Any]]) -> dict[str, Any]:
    media: Counter[str] = Counter()
    for record in records:
        execution = record.get("execution")
        if execution:
            media["images"] += execution["images_found"]
            media["attached"] += len(execution["attached"])
            media["refused"] += len(execution["refused"])
            media["before"] += execution["bytes_before"]
            media["after"] += execution["bytes_after"]
    return {
        "media": media,
        "refused": sum(bool((r.get("execution") or {}).get("refused")) for r in records),
        "route_refusals": sum(r["facts"]["path"] == "refuses" for r in records),
        "hours": Counter((r["timestamp"][:13], r["lane"]) for r in records),
    }


def test_the_aggregate_carries_what_the_report_draws(fleet: Path) -> None:
    records = list(fleet_records(3000))
    expected = _expected(records)
    result = _audit(fleet)
    assert result.decisions == 3000
    total = result.media_by(lambda key: "all")["all"]
    assert (total.images, total.attached, total.refused) == (
        expected["media"]["images"],
        expected["media"]["attached"],
        expected["media"]["refused"],
    )
    assert (total.bytes_before, total.bytes_after) == (
        expected["media"]["before"],
        expected["media"]["after"],
    )
    assert result.refused_images.count == expected["refused"] > 0
    assert result.route_refusals.count == expected["route_refusals"] > 0
    hours = Counter(
        {(f"{key.day.isoformat()}T{key.hour:02d}", key.lane): n for key, n in result.hours.items()}
    )
    assert hours == expected["hours"]
    first_refused = next(r for r in records if (r.get("execution") or {}).get("refused"))
    sample = result.refused_images.samples[0]
    assert sample.decision_id == first_refused["decision_id"]
    assert sample.note == first_refused["execution"]["refused"][0]["reason"]


def test_parallel_reading_carries_the_same_pictures(
    fleet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_parallel, "SPLIT_BYTES", 1 << 16)  # split even this small file
    single = _audit(fleet)
    parallel = aggregate_in_parallel(expand([str(fleet)]), Query(), None, 2)
    assert parallel.hours == single.hours
    assert parallel.media == single.media
    assert parallel.refused_images == single.refused_images
    assert parallel.route_refusals == single.route_refusals


def test_lanes_over_time_picks_a_unit_that_reads(tmp_path: Path) -> None:
    short = _audit(write_fleet_trace(tmp_path / "short.jsonl", 200, days=1))
    unit, buckets = time_buckets(short)
    assert unit == "hour"
    assert len(buckets) == 24
    assert sum(sum(lanes.values()) for _, lanes in buckets) == 200
    two_weeks = _audit(write_fleet_trace(tmp_path / "weeks.jsonl", 200, days=14))
    assert time_buckets(two_weeks)[0] == "day"
    assert len(time_buckets(two_weeks)[1]) == 14
    year = _audit(write_fleet_trace(tmp_path / "year.jsonl", 400, days=365))
    unit, buckets = time_buckets(year)
    assert unit == "week"
    assert 52 <= len(buckets) <= 54
    assert sum(sum(lanes.values()) for _, lanes in buckets) == 400


@pytest.mark.slow  # traces up to large sizes
def test_the_report_is_drawn_from_the_aggregate_whatever_the_size(tmp_path: Path) -> None:
    small = render_audit_report(_audit(write_fleet_trace(tmp_path / "a.jsonl", 1_000)))
    large = render_audit_report(_audit(write_fleet_trace(tmp_path / "b.jsonl", 100_000)))
    # 100 times the records; the page grows only by the digits of larger numbers.
    assert len(large) < 1.1 * len(small)
    assert "100,000 decisions" in large


def test_hostile_names_in_a_trace_stay_text(tmp_path: Path) -> None:
    record = next(fleet_records(1))
    record["model"] = '<img src=x onerror="alert(1)">'
    record["warnings"] = ["</table><script>alert(2)</script>"]
    trace = tmp_path / "hostile.jsonl"
    trace.write_text(json.dumps(record) + "\n")
    page = render_audit_report(_audit(trace))
    assert "<img src=x" not in page
    assert "<script>" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page


def test_findings_link_to_decisions_listed_in_the_page(fleet: Path) -> None:
    page = render_audit_report(_audit(fleet))
    links = set(re.findall(r'href="#(decision-[^"]+)"', page))
    anchors = set(re.findall(r'id="(decision-[^"]+)"', page))
    assert links and links <= anchors


def test_audit_html_writes_the_page_and_keeps_stdout(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.html"
    assert main(["audit", str(fleet), "--html", str(report), "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["decisions"] == 3000  # stdout is still exactly one JSON document
    assert f"report written to {report}" in err
    assert report.read_text().startswith("<!DOCTYPE html>")


def test_audit_html_to_an_unwritable_place_is_a_one_line_error(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(fleet), "--html", str(tmp_path / "no" / "such" / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("visiongate audit: error: cannot write `")
    assert len(err.splitlines()) == 1
    assert main(["audit", str(fleet), "--html", str(tmp_path)]) == 2  # a directory
    capsys.readouterr()


def test_audit_html_with_decision_is_a_usage_error(
    fleet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(fleet), "--decision", "x", "--html", str(tmp_path / "r")]) == 2
    assert "--html" in capsys.readouterr().err
