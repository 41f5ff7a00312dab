"""One pass over any number of trace inputs, into an `AuditResult`.

Memory is bounded by what is distinct (days x providers x models x rules x cells x sources x
policies, a few thousand keys in a fleet's month), never by the number of records: each
line is decoded, counted and dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any, Final, TypeVar

from ._filters import FilterHits, Query
from ._inputs import InputError, TraceInput, framing, lines
from ._media import first_reason, media_counts
from ._policies import PolicyStatus, Standing, file_sha256, policy_status
from ._read import Facts, Malformed, PolicyKey, Row, parse_line
from ._result import (
    DIMENSIONS,
    AuditResult,
    CubeKey,
    Finding,
    HourKey,
    MediaKey,
    MinuteKey,
    PolicyUse,
    Sample,
    policy_label,
)

__all__ = ["Builder", "Query", "aggregate"]

SAMPLES: Final = 20
"""Decisions kept per finding (and malformed lines) as examples; the counts are complete."""
DISTINCT_TEXTS: Final = 1000
"""Distinct warning texts and execution or sanitizer keys counted one by one; the rest are
counted together, so a trace of unique warnings cannot grow memory without bound."""
OTHER: Final = "(other)"
MINUTE_KEYS: Final = 1000
"""(minute, lane) counts kept for the report of a short trace: 6 hours of two lanes is 720.
Past that the trace spans more than 6 hours, which the report draws by the hour."""


def aggregate(
    inputs: Iterable[TraceInput], query: Query | None = None, policy_override: str | None = None
) -> AuditResult:
    """Read every input once and aggregate the decisions `query` admits (all by default)."""
    builder = Builder(query or Query(), policy_override)
    for source in inputs:
        builder.read(source)
    return builder.result()


class Builder:
    """Counts records as they are read; `merge` adds another builder's counts."""

    def __init__(self, query: Query, override: str | None) -> None:
        self.query = query
        self.override = override
        self.cube: dict[tuple[Any, ...], int] = {}
        self.hourly_names = query.group_by if "hour" in query.group_by else ()
        self.filtering = query != Query(group_by=query.group_by)
        self.hits = FilterHits(query)
        self.hourly: Counter[tuple[str, ...]] = Counter()
        # Sentinels rather than None: two comparisons per record, no None test.
        self.first = datetime.max.replace(tzinfo=UTC)
        self.last = datetime.min.replace(tzinfo=UTC)
        self.statuses: dict[PolicyKey, PolicyStatus] = {}
        self.file_shas: dict[str, str | None] = {}
        self.stale: list[Sample] = []
        self.stale_count = 0
        self.unconfirmed: list[Sample] = []
        self.unconfirmed_count = 0
        self.malformed: list[Malformed] = []
        self.malformed_count = 0
        self.refused: list[Sample] = []
        self.refused_count = 0
        self.route_refusals: list[Sample] = []
        self.route_refusals_count = 0
        # For the pictures: lanes by hour, and images and bytes by (day, source, lane) as
        # lists of the `MediaCounts` fields, summed in place.
        self.hours: dict[tuple[date, int, str], int] = {}
        self.minutes: dict[tuple[date, int, int, str], int] | None = {}
        # Execution sections summed per (day, source, lane), and how many there were; the
        # report's images and bytes, and the summary's execution totals, come from these.
        self.media: dict[tuple[date, str | None, str], dict[str, int]] = {}
        self.media_decisions: dict[tuple[date, str | None, str], int] = {}
        self.warnings: Counter[str] = Counter()
        self.warned = 0
        self.sanitizer: dict[str, int] = {}
        self.lost_records = 0
        self.amendments = 0
        self.lines_read = 0
        self.inputs: list[str] = []
        self.input_errors: list[str] = []

    def read(self, source: TraceInput, start: int = 0, stop: int | None = None) -> None:
        """Count the records of `source` (of its byte range `start:stop`; line numbers are
        then relative to `start` until `merge` shifts them)."""
        file = source.shown
        if not self.inputs or self.inputs[-1] != file:
            self.inputs.append(file)
        framed = framing()
        try:
            for number, line in lines(source, start, stop, framed):
                parsed = parse_line(line)
                if isinstance(parsed, str):
                    self._malformed(Malformed(file, number, parsed))
                    continue
                if self.hits:
                    self.hits.note(parsed)
                if self.filtering and not self.query.admits(parsed):
                    continue
                if parsed.amended is not None:
                    self.amendments += 1  # the decision was counted with its first record
                else:
                    self._add(parsed, file, number)
        except InputError as error:
            self.input_errors.append(str(error))
        self.lines_read = framed.number

    def _malformed(self, item: Malformed) -> None:
        self.malformed_count += 1
        if len(self.malformed) < SAMPLES:
            self.malformed.append(item)

    def _add(self, row: Row, file: str, number: int) -> None:
        # The hot path: one call per record, plain tuples, no helper calls in the common case.
        stamp = row.timestamp
        if stamp < self.first:
            self.first = stamp
        if stamp > self.last:
            self.last = stamp
        policy = row.policy
        cube = self.cube
        day = stamp.date()
        key = (
            day,
            row.provider,
            row.model,
            row.lane,
            row.rule,
            row.facts,
            row.source,
            policy,
        )
        cube[key] = cube.get(key, 0) + 1
        hour = (day, stamp.hour, row.lane)
        self.hours[hour] = self.hours.get(hour, 0) + 1
        minutes = self.minutes
        if minutes is not None:
            minute = (day, stamp.hour, stamp.minute, row.lane)
            minutes[minute] = minutes.get(minute, 0) + 1
            if len(minutes) > MINUTE_KEYS:
                self.minutes = None  # a long trace: the report counts hours
        if self.hourly_names:
            self._hour(row, key)
        if row.lane == "native" and _unconfirmed(row.facts):
            self.unconfirmed_count += 1
            if len(self.unconfirmed) < SAMPLES:
                self.unconfirmed.append(_sample(row, file, number))
        status = self.statuses.get(policy) or self._status(policy)
        if status.standing is Standing.STALE:
            self.stale_count += 1
            if len(self.stale) < SAMPLES:
                self.stale.append(_sample(row, file, number))
        if row.warnings:
            self.warned += 1
            for text in row.warnings:
                _bounded_add(self.warnings, text, 1)
        execution = row.execution
        if execution:
            where = (day, row.source, row.lane)
            sums = self.media.get(where)
            if sums is None:
                sums = self.media[where] = {}
                self.media_decisions[where] = 0
            _sum_numbers(sums, execution)
            self.media_decisions[where] += 1
            refused = execution.get("refused")
            if refused:
                self._refused(row, refused, file, number)
        if row.facts.path == "refuses":
            self.route_refusals_count += 1
            if len(self.route_refusals) < SAMPLES:
                self.route_refusals.append(_sample(row, file, number))
        if row.trace_errors is not None:
            self.lost_records += row.trace_errors.lost
        if row.sanitizer:
            for surface, kinds in row.sanitizer.items():
                if type(kinds) is dict:
                    _sum_numbers(self.sanitizer, kinds, f"{surface}.")

    def _refused(self, row: Row, refused: Any, file: str, number: int) -> None:
        self.refused_count += 1
        if len(self.refused) < SAMPLES:
            self.refused.append(_sample(row, file, number, first_reason(refused)))

    def _status(self, policy: PolicyKey) -> PolicyStatus:
        status = self.statuses.get(policy)
        if status is None:
            status = policy_status(policy, self.override, self._file_sha)
            self.statuses[policy] = status
        return status

    def _file_sha(self, path: str) -> str | None:
        if path not in self.file_shas:
            self.file_shas[path] = file_sha256(path)
        return self.file_shas[path]

    def _hour(self, row: Row, raw: tuple[Any, ...]) -> None:
        """Count `row` under `--group-by` names that include `hour` (`raw`: its cube key)."""
        key = _cube_key(raw)
        values = tuple(
            row.timestamp.strftime("%Y-%m-%dT%H") if name == "hour" else DIMENSIONS[name](key)
            for name in self.hourly_names
        )
        self.hourly[(*values, row.lane)] += 1

    def result(self) -> AuditResult:
        return AuditResult(
            decisions=sum(self.cube.values()),
            first=self.first if self.cube else None,
            last=self.last if self.cube else None,
            cube={_cube_key(key): count for key, count in self.cube.items()},
            policies=self._policy_uses(),
            stale=Finding(self.stale_count, tuple(self.stale)),
            unconfirmed_native=Finding(self.unconfirmed_count, tuple(self.unconfirmed)),
            malformed=Finding(self.malformed_count),
            malformed_lines=tuple(self.malformed),
            warnings=dict(self.warnings),
            warned_decisions=self.warned,
            lost_records=self.lost_records,
            amendments=self.amendments,
            execution=self._execution_totals(),
            sanitizer=dict(self.sanitizer),
            inputs=tuple(self.inputs),
            input_errors=tuple(self.input_errors),
            group_by=self.query.group_by,
            groups=self._groups(),
            hours={HourKey._make(key): count for key, count in self.hours.items()},
            minutes=(
                None
                if self.minutes is None
                else {MinuteKey._make(key): count for key, count in self.minutes.items()}
            ),
            media={
                MediaKey._make(key): media_counts(sums, self.media_decisions[key])
                for key, sums in self.media.items()
            },
            refused_images=Finding(self.refused_count, tuple(self.refused)),
            route_refusals=Finding(self.route_refusals_count, tuple(self.route_refusals)),
            unmatched=self.hits.unmatched(),
        )

    def merge(self, other: Builder, line_offset: int) -> None:
        """Add what another builder counted in a later part of the inputs; its line numbers
        are shifted by `line_offset` (the lines of its file read before its part)."""
        for key, count in other.cube.items():
            self.cube[key] = self.cube.get(key, 0) + count
        self.hourly.update(other.hourly)
        self.first, self.last = min(self.first, other.first), max(self.last, other.last)
        self.statuses = {**other.statuses, **self.statuses}
        self.stale_count += other.stale_count
        self.unconfirmed_count += other.unconfirmed_count
        self.malformed_count += other.malformed_count
        self.refused_count += other.refused_count
        self.route_refusals_count += other.route_refusals_count
        _extend_shifted(self.refused, other.refused, line_offset)
        _extend_shifted(self.route_refusals, other.route_refusals, line_offset)
        for hour, count in other.hours.items():
            self.hours[hour] = self.hours.get(hour, 0) + count
        if self.minutes is None or other.minutes is None:
            self.minutes = None
        else:
            for minute, count in other.minutes.items():
                self.minutes[minute] = self.minutes.get(minute, 0) + count
            if len(self.minutes) > MINUTE_KEYS:
                self.minutes = None
        for key, sums in other.media.items():
            _sum_numbers(self.media.setdefault(key, {}), sums)
            self.media_decisions[key] = (
                self.media_decisions.get(key, 0) + other.media_decisions[key]
            )
        _extend_shifted(self.stale, other.stale, line_offset)
        _extend_shifted(self.unconfirmed, other.unconfirmed, line_offset)
        _extend_shifted(self.malformed, other.malformed, line_offset)
        for text, count in other.warnings.items():
            _bounded_add(self.warnings, text, count)
        _sum_numbers(self.sanitizer, other.sanitizer)
        self.warned += other.warned
        self.lost_records += other.lost_records
        self.amendments += other.amendments
        for file in other.inputs:
            if not self.inputs or self.inputs[-1] != file:
                self.inputs.append(file)
        self.input_errors += other.input_errors
        self.hits.merge(other.hits)

    def _execution_totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for sums in self.media.values():
            _sum_numbers(totals, sums)
        return totals

    def _policy_uses(self) -> tuple[PolicyUse, ...]:
        counts: Counter[PolicyKey] = Counter()
        for key, count in self.cube.items():
            counts[key[-1]] += count
        uses = [PolicyUse(policy, count, self._status(policy)) for policy, count in counts.items()]
        return tuple(sorted(uses, key=lambda use: (policy_label(use.policy), -use.count)))

    def _groups(self) -> dict[tuple[str, ...], dict[str, int]]:
        names = self.query.group_by
        if not names:
            return {}
        flat: Counter[tuple[str, ...]] = Counter()
        if "hour" in names:
            flat = self.hourly
        else:
            for raw, count in self.cube.items():
                key = _cube_key(raw)
                flat[(*(DIMENSIONS[name](key) for name in names), key.lane)] += count
        groups: dict[tuple[str, ...], dict[str, int]] = {}
        for (*values, lane), count in flat.items():
            lanes = groups.setdefault(tuple(values), {})
            lanes[lane] = lanes.get(lane, 0) + count
        return groups


def _sample(row: Row, file: str, number: int, note: str | None = None) -> Sample:
    return Sample(
        row.decision_id,
        file,
        number,
        row.timestamp,
        row.provider,
        row.model,
        row.facts.catalog,
        row.rule,
        row.policy,
        note,
    )


Located = TypeVar("Located", Sample, Malformed)


def _extend_shifted(mine: list[Located], theirs: list[Located], offset: int) -> None:
    room = SAMPLES - len(mine)
    mine += [replace(item, line=item.line + offset) for item in theirs[:room]]


def _cube_key(raw: tuple[Any, ...]) -> CubeKey:
    return CubeKey._make(raw)


def _bounded_add(counter: Counter[str], key: str, amount: int) -> None:
    if key in counter or len(counter) < DISTINCT_TEXTS:
        counter[key] += amount
    else:
        counter[OTHER] += amount


def _sum_numbers(totals: dict[str, int], section: Mapping[str, Any], prefix: str = "") -> None:
    """Add a section's counts: integers as they are, lists by their length (`attached`,
    `refused`, `described`: images); a prefix names the surface (`text.tag_chars`)."""
    for name, value in section.items():
        kind = type(value)  # `type(...) is int` leaves booleans out
        if kind is int:
            amount = value
        elif kind is list:
            amount = len(value)
        else:
            continue
        key = prefix + name if prefix else name
        current = totals.get(key)
        if current is not None:
            totals[key] = current + amount
        elif len(totals) < DISTINCT_TEXTS:
            totals[key] = amount
        else:
            totals[OTHER] = totals.get(OTHER, 0) + amount


def _unconfirmed(facts: Facts) -> bool:
    """Pixels for a model the catalog does not confirm reads them: a finding, except an
    unknown model under `image_input_mode: native`, the operator's override the seed names
    for proxy aliases the catalog does not know. Native on a model the catalog calls
    text-only stays one: the seed warns the provider then errors or falls back to text."""
    return facts.catalog == "no_vision" or (facts.catalog == "unknown" and facts.mode != "native")
