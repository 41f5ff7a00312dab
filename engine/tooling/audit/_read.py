"""`visiongate audit`: read decision traces (JSON lines) and summarize them for auditors.

A malformed line is reported with its number and skipped; every other record counts. Only
what a decision cannot be understood without is required (`decision_id`, `timestamp`,
`lane`, `facts`, `policy`); every other field of the trace format is optional.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..._decision import SCHEMA_VERSION
from ..._load import bundled_policy_text, is_bundled_policy
from ..._policy import source_sha256
from ..._vocabulary import FACTS, LANES


@dataclass(frozen=True)
class TraceRecord:
    """One decision read from a trace file."""

    file: str
    line: int
    data: Mapping[str, Any]
    timestamp: datetime

    @property
    def decision_id(self) -> str:
        return str(self.data["decision_id"])

    @property
    def lane(self) -> str:
        return str(self.data["lane"])

    @property
    def rule(self) -> str | None:
        rule = self.data.get("rule")
        return str(rule) if rule else None

    @property
    def facts(self) -> Mapping[str, str]:
        facts: Mapping[str, str] = self.data["facts"]
        return facts

    @property
    def policy(self) -> Mapping[str, Any]:
        policy: Mapping[str, Any] = self.data["policy"]
        return policy

    @property
    def model_label(self) -> str | None:
        provider, model = self.data.get("provider"), self.data.get("model")
        return f"{provider}/{model}" if provider or model else None

    @property
    def warnings(self) -> list[str]:
        warnings = self.data.get("warnings") or []
        return [str(w) for w in warnings] if isinstance(warnings, list) else [str(warnings)]


@dataclass(frozen=True)
class Malformed:
    file: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.problem}"


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp or a date; naive values are taken as UTC."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _problem(data: Any) -> str | None:
    """Why a parsed line is not a usable record, or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        return f"unsupported schema_version `{version}` (this version reads {SCHEMA_VERSION})"
    missing = [
        key for key in ("decision_id", "timestamp", "lane", "facts", "policy") if key not in data
    ]
    if missing:
        return "missing " + ", ".join(f"`{key}`" for key in missing)
    if data["lane"] not in LANES:
        return f"unknown lane `{data['lane']}`"
    facts = data["facts"]
    if not isinstance(facts, dict) or any(
        facts.get(n) not in domain for n, domain in FACTS.items()
    ):
        return "`facts` must give a valid value for each of mode, catalog, aux and path"
    if not isinstance(data["policy"], dict):
        return "`policy` must be an object"
    return None


def _parse_line(text: str, file: str, number: int) -> TraceRecord | Malformed:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return Malformed(file, number, f"not JSON: {error.msg} (column {error.colno})")
    except RecursionError:
        # The C decoder recurses once per nesting level: a hostile line must not end the run.
        return Malformed(file, number, "not a record: JSON nested too deeply")
    problem = _problem(data)
    if problem is not None:
        return Malformed(file, number, problem)
    try:
        timestamp = parse_time(str(data["timestamp"]))
    except ValueError:
        return Malformed(file, number, f"bad timestamp `{data['timestamp']}`")
    return TraceRecord(file, number, data, timestamp)


def read_trace_text(text: str, file: str) -> tuple[list[TraceRecord], list[Malformed]]:
    records: list[TraceRecord] = []
    malformed: list[Malformed] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parsed = _parse_line(line, file, number)
        (records if isinstance(parsed, TraceRecord) else malformed).append(parsed)  # type: ignore[arg-type]
    return records, malformed


def read_traces(paths: Sequence[str | Path]) -> tuple[list[TraceRecord], list[Malformed]]:
    """Every record of every file; an unreadable file is reported as line 0."""
    records: list[TraceRecord] = []
    malformed: list[Malformed] = []
    for path in paths:
        shown = Path(path).as_posix()
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            malformed.append(
                Malformed(shown, 0, f"cannot read the file: {error.strerror or error}")
            )
            continue
        found, bad = read_trace_text(text, shown)
        records += found
        malformed += bad
    return records, malformed


def within(
    records: Iterable[TraceRecord], since: datetime | None, until: datetime | None
) -> list[TraceRecord]:
    """Records with `since <= timestamp <= until` (either bound optional)."""
    return [
        r
        for r in records
        if (since is None or r.timestamp >= since) and (until is None or r.timestamp <= until)
    ]


def current_policy_sha(path: str, override: str | None = None) -> str | None:
    """The sha256 the policy file has now (`override`: compare with that file instead)."""
    candidate = Path(override or path)
    if candidate.is_file():
        try:
            return source_sha256(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return None
    name = path.removeprefix("policies/").removesuffix(".yaml")
    if override is None and path.startswith("policies/") and is_bundled_policy(name):
        return source_sha256(bundled_policy_text(name))
    return None


@dataclass(frozen=True)
class PolicyUse:
    """Decisions made under one policy content."""

    name: str
    version: str
    sha256: str
    path: str
    count: int
    current_sha256: str | None

    @property
    def current(self) -> bool:
        return self.current_sha256 == self.sha256


@dataclass(frozen=True)
class AuditSummary:
    records: tuple[TraceRecord, ...]
    malformed: tuple[Malformed, ...]
    lanes: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)
    policies: tuple[PolicyUse, ...] = ()
    unconfirmed_native: tuple[TraceRecord, ...] = ()
    """Native decisions for models the catalog calls `no_vision` or `unknown`."""
    warnings: Counter[str] = field(default_factory=Counter)
    execution: Counter[str] = field(default_factory=Counter)
    sanitizer: Counter[str] = field(default_factory=Counter)

    @property
    def stale(self) -> tuple[TraceRecord, ...]:
        """Decisions made under a policy content other than the file's current one."""
        old = {(use.path, use.sha256) for use in self.policies if not use.current}
        return tuple(
            r
            for r in self.records
            if (str(r.policy.get("path")), str(r.policy.get("sha256"))) in old
        )


def _numbers(records: Iterable[TraceRecord], key: str) -> Counter[str]:
    totals: Counter[str] = Counter()
    for record in records:
        section = record.data.get(key)
        if isinstance(section, dict):
            for name, value in section.items():
                if isinstance(value, int) and not isinstance(value, bool):  # counts and bytes
                    totals[name] += value
    return totals


def _policy_uses(records: Sequence[TraceRecord], override: str | None) -> tuple[PolicyUse, ...]:
    counts: Counter[tuple[str, str, str, str]] = Counter(
        (
            str(r.policy.get("name", "?")),
            str(r.policy.get("version", "?")),
            str(r.policy.get("sha256", "?")),
            str(r.policy.get("path", "?")),
        )
        for r in records
    )
    currents = {path: current_policy_sha(path, override) for _n, _v, _s, path in counts}
    return tuple(
        PolicyUse(name, version, sha, path, count, currents[path])
        for (name, version, sha, path), count in sorted(
            counts.items(), key=lambda i: (i[0][3], -i[1])
        )
    )


def summarize(
    records: Sequence[TraceRecord], malformed: Sequence[Malformed], policy: str | None = None
) -> AuditSummary:
    """Counts by lane, rule, source, model and policy; the findings auditors look for."""
    ordered = sorted(records, key=lambda r: r.timestamp)
    return AuditSummary(
        records=tuple(ordered),
        malformed=tuple(malformed),
        lanes=Counter(r.lane for r in ordered),
        rules=Counter(r.rule or "(default)" for r in ordered),
        sources=Counter(str(r.data.get("source") or "(not recorded)") for r in ordered),
        models=Counter(r.model_label or "(facts given directly)" for r in ordered),
        policies=_policy_uses(ordered, policy),
        unconfirmed_native=tuple(
            r
            for r in ordered
            if r.lane == "native" and r.facts.get("catalog") in ("no_vision", "unknown")
        ),
        warnings=Counter(w for r in ordered for w in r.warnings),
        execution=_numbers(ordered, "execution"),
        sanitizer=_numbers(ordered, "sanitizer"),
    )


def find_decision(records: Sequence[TraceRecord], decision_id: str) -> list[TraceRecord]:
    """The record with this id; else every record whose id starts with it."""
    exact = [r for r in records if r.decision_id == decision_id]
    return exact or [r for r in records if r.decision_id.startswith(decision_id)]
