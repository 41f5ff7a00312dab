"""The audit page's lanes over time (issue 28): the bucket is chosen from the span, so an hour
of data is not one bar in a wide empty chart, and the caption counts in words ("1 hour", not
"1 hours")."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fleet_trace import write_fleet_trace

from visiongate.engine.tooling.audit import _parallel
from visiongate.engine.tooling.audit._aggregate import Query, aggregate
from visiongate.engine.tooling.audit._inputs import expand
from visiongate.engine.tooling.audit._parallel import aggregate_in_parallel
from visiongate.engine.tooling.pictures import render_audit_report
from visiongate.engine.tooling.pictures._audit_data import time_buckets

# span of the trace (days) -> (unit, columns at least, at most)
SPANS = {
    "an hour": (1 / 24, "minute", 55, 61),
    "three hours": (3 / 24, "5 minutes", 34, 38),
    "six hours": (6 / 24 - 1 / 1440, "10 minutes", 34, 38),
    "a day": (1, "hour", 24, 25),
    "two weeks": (14, "day", 14, 15),
}


@pytest.mark.parametrize(("days", "unit", "least", "most"), SPANS.values(), ids=SPANS)
def test_the_time_bucket_is_chosen_from_the_span(
    days: float, unit: str, least: int, most: int, tmp_path: Path
) -> None:
    result = aggregate(expand([str(write_fleet_trace(tmp_path / "t.jsonl", 300, days=days))]))  # type: ignore[arg-type]
    found, buckets = time_buckets(result)
    assert found == unit
    assert least <= len(buckets) <= most
    assert sum(sum(lanes.values()) for _, lanes in buckets) == 300  # every decision drawn


def test_the_caption_counts_in_words(tmp_path: Path) -> None:
    one = aggregate(expand([str(write_fleet_trace(tmp_path / "a.jsonl", 5, days=1 / 1440))]))  # type: ignore[arg-type]
    assert "decisions per minute (1 minute)" in render_audit_report(one)
    hour = aggregate(expand([str(write_fleet_trace(tmp_path / "b.jsonl", 300, days=1 / 24))]))  # type: ignore[arg-type]
    page = render_audit_report(hour)
    assert "minutes)" in page and "1 hours" not in page
    three = aggregate(expand([str(write_fleet_trace(tmp_path / "c.jsonl", 300, days=3 / 24))]))  # type: ignore[arg-type]
    assert "columns of 5 minutes)" in render_audit_report(three)


def test_a_long_trace_keeps_no_minute_counts(tmp_path: Path) -> None:
    result = aggregate(expand([str(write_fleet_trace(tmp_path / "t.jsonl", 3000, days=14))]))
    assert result.minutes is None  # bounded: a fleet's month holds no per-minute table


def test_parallel_reading_gives_the_same_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_parallel, "SPLIT_BYTES", 1 << 14)
    path = write_fleet_trace(tmp_path / "t.jsonl", 2000, days=1 / 24)  # type: ignore[arg-type]
    single = aggregate(expand([str(path)]))
    assert len(_parallel.plan(expand([str(path)]), 2)) == 2
    assert aggregate_in_parallel(expand([str(path)]), Query(), None, 2).minutes == single.minutes
