"""What the audit report draws, read from an `AuditResult`: time buckets, top rows, images.

Only aggregates are read here, so the work is bounded by what is distinct in the trace
(days, models, rules), never by its number of records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Final

from ..audit._result import NO_SOURCE, AuditResult, CubeKey, MediaCounts, model_label

TOP: Final = 20
"""Rows a chart shows before the rest are counted together."""
MINUTES_UP_TO: Final = 6 * 60
"""A trace spanning less (in minutes) is drawn in buckets of minutes."""
MINUTE_STEPS: Final = (1, 2, 5, 10, 15, 30)
MOST_COLUMNS: Final = 60
"""Minute buckets are the finest step that keeps a chart within this many columns."""
HOURS_UP_TO: Final = 72
DAYS_UP_TO: Final = 180
WEEKS_UP_TO: Final = 260

Buckets = list[tuple[str, dict[str, int]]]


def by_lane(result: AuditResult, read: Callable[[CubeKey], str]) -> dict[str, dict[str, int]]:
    """Decisions by one reading of the cube key, each split by lane."""
    rows: dict[str, dict[str, int]] = {}
    for key, count in result.cube.items():
        lanes = rows.setdefault(read(key), {})
        lanes[key.lane] = lanes.get(key.lane, 0) + count
    return rows


def top_rows(rows: Mapping[str, Mapping[str, int]], limit: int = TOP) -> Buckets:
    """The `limit` largest rows, largest first, and the rest added up in one last row."""
    ordered = sorted(rows.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    shown = [(name, dict(counts)) for name, counts in ordered[:limit]]
    rest = ordered[limit:]
    if rest:
        other: Counter[str] = Counter()
        for _, counts in rest:
            other.update(counts)
        shown.append((f"({len(rest)} others)", dict(other)))
    return shown


def models(result: AuditResult) -> Buckets:
    return top_rows(by_lane(result, lambda key: model_label(key.provider, key.model)))


def sources(result: AuditResult) -> Buckets:
    return top_rows(by_lane(result, lambda key: key.source or NO_SOURCE))


def rules(result: AuditResult) -> Buckets:
    return top_rows(by_lane(result, lambda key: key.rule or "(default)"))


def time_buckets(result: AuditResult) -> tuple[str, Buckets]:
    """Lanes over time, in the finest unit that keeps the chart readable: minutes (1 to 30 at
    a time) over up to six hours, hours over up to three days, then days, weeks (starting
    Monday) or months; empty buckets are kept, so the axis is true to time. The unit is
    singular (`hour`) or a count (`5 minutes`)."""
    if result.first is None or result.last is None:
        return "day", []
    first, last = result.first.date(), result.last.date()
    first_minute = result.first.replace(second=0, microsecond=0)
    span_minutes = (result.last - first_minute) // timedelta(minutes=1) + 1
    if result.minutes is not None and span_minutes <= MINUTES_UP_TO:
        return _minutes(result, first_minute, span_minutes)
    span_hours = result.last - result.first.replace(minute=0, second=0, microsecond=0)
    if span_hours < timedelta(hours=HOURS_UP_TO):
        return "hour", _hours(result)
    days = by_lane(result, lambda key: key.day.isoformat())
    if (last - first).days < DAYS_UP_TO:
        return "day", _fill(days, first, last, timedelta(days=1), date.isoformat)
    unit = "week" if (last - first).days < WEEKS_UP_TO * 7 else "month"
    grouped: dict[str, dict[str, int]] = {}
    for name, lanes in days.items():
        bucket = _bucket_of(date.fromisoformat(name), unit).isoformat()
        target = grouped.setdefault(bucket, {})
        for lane, count in lanes.items():
            target[lane] = target.get(lane, 0) + count
    start, end = _bucket_of(first, unit), _bucket_of(last, unit)
    return unit, _fill_units(grouped, start, end, unit)


def _minutes(result: AuditResult, start: datetime, span: int) -> tuple[str, Buckets]:
    assert result.minutes is not None and result.last is not None
    step = next((s for s in MINUTE_STEPS if span / s <= MOST_COLUMNS), MINUTE_STEPS[-1])
    start -= timedelta(minutes=start.minute % step)
    counts: dict[datetime, dict[str, int]] = {}
    for key, count in result.minutes.items():
        moment = datetime(key.day.year, key.day.month, key.day.day, key.hour, key.minute,
                          tzinfo=start.tzinfo)  # fmt: skip
        bucket = moment - timedelta(minutes=(moment - start) // timedelta(minutes=1) % step)
        lanes = counts.setdefault(bucket, {})
        lanes[key.lane] = lanes.get(key.lane, 0) + count
    one_day = start.date() == result.last.date()
    buckets: Buckets = []
    moment = start
    while moment <= result.last:
        name = f"{moment:%H:%M}" if one_day else f"{moment:%m-%d %H:%M}"
        buckets.append((name, counts.get(moment, {})))
        moment += timedelta(minutes=step)
    return ("minute" if step == 1 else f"{step} minutes"), buckets


def _hours(result: AuditResult) -> Buckets:
    assert result.first is not None and result.last is not None
    counts: dict[str, dict[str, int]] = {}
    for key, count in result.hours.items():
        name = _hour_label(key.day, key.hour)
        lanes = counts.setdefault(name, {})
        lanes[key.lane] = lanes.get(key.lane, 0) + count
    start = result.first.replace(minute=0, second=0, microsecond=0)
    buckets: Buckets = []
    moment = start
    while moment <= result.last:
        name = _hour_label(moment.date(), moment.hour)
        buckets.append((name, counts.get(name, {})))
        moment += timedelta(hours=1)
    return buckets


def _hour_label(day: date, hour: int) -> str:
    return f"{day.isoformat()} {hour:02d}h"


def _fill(
    rows: Mapping[str, dict[str, int]],
    first: date,
    last: date,
    step: timedelta,
    name: Callable[[date], str],
) -> Buckets:
    buckets: Buckets = []
    day = first
    while day <= last:
        buckets.append((name(day), rows.get(name(day), {})))
        day += step
    return buckets


def _bucket_of(day: date, unit: str) -> date:
    return day - timedelta(days=day.weekday()) if unit == "week" else day.replace(day=1)


def _fill_units(rows: Mapping[str, dict[str, int]], start: date, end: date, unit: str) -> Buckets:
    if unit == "week":
        return _fill(rows, start, end, timedelta(days=7), date.isoformat)
    buckets: Buckets = []
    month = start
    while month <= end:
        buckets.append((month.isoformat()[:7], rows.get(month.isoformat(), {})))
        month = (month + timedelta(days=32)).replace(day=1)
    return buckets


def media_by_source(result: AuditResult) -> dict[str, MediaCounts]:
    return dict(
        sorted(
            result.media_by(lambda key: key.source or NO_SOURCE).items(),
            key=lambda item: (-item[1].images, item[0]),
        )
    )


def media_total(result: AuditResult) -> MediaCounts:
    total = MediaCounts()
    for counts in result.media.values():
        total = total + counts
    return total


def route_refusals_by_model(result: AuditResult) -> Buckets:
    """Decisions on routes that refuse images, by model (from the cube: complete counts)."""
    rows = by_lane(
        _only(result, lambda key: key.facts.path == "refuses"),
        lambda key: model_label(key.provider, key.model),
    )
    return top_rows(rows)


def _only(result: AuditResult, keep: Callable[[CubeKey], bool]) -> AuditResult:
    return replace(result, cube={key: n for key, n in result.cube.items() if keep(key)})


def span_text(first: datetime | None, last: datetime | None) -> str:
    if first is None or last is None:
        return "no decisions"
    return f"{first:%Y-%m-%d %H:%M:%S}Z to {last:%Y-%m-%d %H:%M:%S}Z"
