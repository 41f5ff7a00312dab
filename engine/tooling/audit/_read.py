"""Trace lines to records: a fast typed decode, and a careful one that says what is wrong.

The fast path decodes only the fields an audit counts into frozen msgspec structs (the rest
of the line is skipped by the decoder without building objects). A line it refuses takes the
slow path, which either finds the line acceptable after all (an optional field of an
unexpected shape is dropped, as it always was) or says why it is malformed. Only what a
decision cannot be understood without is required (`decision_id`, `timestamp`, `lane`,
`facts`, `policy`). A malformed or hostile line (not JSON, nested thousands deep, too long)
is skipped and counted, never fatal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ..._decision import SCHEMA_VERSION
from ..._vocabulary import FACTS, LANES
from ._inputs import MAX_LINE_BYTES, Oversized

READABLE_VERSIONS = (SCHEMA_VERSION,)


if TYPE_CHECKING:

    class Facts(msgspec.Struct, frozen=True):
        mode: str
        catalog: str
        aux: str
        path: str

    Lane = str
else:
    # Built from the vocabulary, so a new fact value or lane needs no change here; the decoder
    # checks every value against its domain in C.
    Facts = msgspec.defstruct(
        "Facts",
        [(name, Literal[domain]) for name, domain in FACTS.items()],
        frozen=True,
        module=__name__,
    )
    Lane = Literal[LANES]


class PolicyKey(msgspec.Struct, frozen=True):
    """The policy a record names; equal keys are the same policy content from one origin."""

    name: str = "?"
    version: str = "?"
    sha256: str = "?"
    path: str | None = None
    bundled: str | None = None
    package_version: str | None = None

    @property
    def origin(self) -> str:
        """`bundled default (visiongate 0.1.0)` or the file path."""
        if self.bundled is not None:
            return f"bundled {self.bundled} (visiongate {self.package_version or '?'})"
        return self.path or "?"


class TraceErrors(msgspec.Struct, frozen=True):
    """What a trace sink reported losing before this record (see `engine/trace`)."""

    lost: int = 0


class Row(msgspec.Struct, frozen=True):
    """What an audit counts of one record."""

    decision_id: str
    timestamp: datetime
    lane: Lane
    facts: Facts
    policy: PolicyKey
    schema_version: Literal[1] = 1
    provider: str | None = None
    model: str | None = None
    rule: str | None = None
    source: str | None = None
    warnings: list[str] = []
    execution: dict[str, Any] | None = None
    sanitizer: dict[str, Any] | None = None
    trace_errors: TraceErrors | None = None
    amended: str | None = None
    """Set on a record written again for the same decision (see `Router`): not a new one."""


@dataclass(frozen=True)
class Malformed:
    file: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.problem}"


_FAST = msgspec.json.Decoder(Row)
_ANY = msgspec.json.Decoder()


def parse_line(line: bytes | Oversized) -> Row | str:
    """The record on `line`, or why it is malformed."""
    if isinstance(line, Oversized):
        return f"line longer than {MAX_LINE_BYTES >> 20} MiB"
    try:
        row = _FAST.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return _careful(line)
    return _utc(row)


def _utc(row: Row) -> Row:
    stamp = row.timestamp
    if stamp.tzinfo is UTC:
        return row
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    return msgspec.structs.replace(row, timestamp=stamp)


def _careful(line: bytes) -> Row | str:
    try:
        data = _ANY.decode(line)
    except msgspec.DecodeError as error:
        return f"not JSON: {_first_line(error)}"
    except RecursionError:
        return "not JSON: nested too deeply"
    problem = record_problem(data)
    if problem is not None:
        return problem
    try:
        timestamp = parse_time(str(data["timestamp"]))
    except ValueError:
        return f"bad timestamp `{str(data['timestamp'])[:40]}`"
    return _lenient(data, timestamp)


def record_problem(data: Any) -> str | None:
    """Why a decoded line is not a usable record, or None."""
    if not isinstance(data, dict):
        return "not a JSON object"
    version = data.get("schema_version", SCHEMA_VERSION)
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        return f"unsupported schema_version `{version}` (this version reads {SCHEMA_VERSION})"
    required = ("decision_id", "timestamp", "lane", "facts", "policy")
    missing = [key for key in required if key not in data]
    if missing:
        return "missing " + ", ".join(f"`{key}`" for key in missing)
    if data["lane"] not in LANES:
        return f"unknown lane `{str(data['lane'])[:40]}`"
    facts = data["facts"]
    if not isinstance(facts, dict) or any(
        facts.get(name) not in domain for name, domain in FACTS.items()
    ):
        return "`facts` must give a valid value for each of mode, catalog, aux and path"
    if not isinstance(data["policy"], dict):
        return "`policy` must be an object"
    return None


def _lenient(data: Mapping[str, Any], timestamp: datetime) -> Row:
    """A record whose optional fields have unexpected shapes: keep what can be read."""
    policy = data["policy"]
    return Row(
        decision_id=str(data["decision_id"]),
        timestamp=timestamp,
        lane=data["lane"],
        facts=Facts(**{name: data["facts"][name] for name in FACTS}),
        policy=PolicyKey(
            **{
                key: str(policy[key])
                for key in ("name", "version", "sha256", "path", "bundled", "package_version")
                if policy.get(key) is not None
            }
        ),
        provider=_text(data.get("provider")),
        model=_text(data.get("model")),
        rule=_text(data.get("rule")) or None,
        source=_text(data.get("source")),
        warnings=_warnings(data.get("warnings")),
        execution=data.get("execution") if isinstance(data.get("execution"), dict) else None,
        sanitizer=data.get("sanitizer") if isinstance(data.get("sanitizer"), dict) else None,
        trace_errors=_trace_errors(data.get("trace_errors")),
        amended=_text(data.get("amended")),
    )


def _trace_errors(value: Any) -> TraceErrors | None:
    lost = value.get("lost") if isinstance(value, dict) else None
    return TraceErrors(lost) if type(lost) is int else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _warnings(value: Any) -> list[str]:
    if not value:
        return []
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or ["malformed"])[0]


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp or a date; naive values are taken as UTC."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class TraceRecord:
    """One whole decision record as read from a trace, for explaining it in words."""

    file: str
    line: int
    data: Mapping[str, Any]
    row: Row

    @property
    def decision_id(self) -> str:
        return self.row.decision_id

    @property
    def timestamp(self) -> datetime:
        return self.row.timestamp

    @property
    def lane(self) -> str:
        return self.row.lane

    @property
    def rule(self) -> str | None:
        return self.row.rule

    @property
    def facts(self) -> Mapping[str, str]:
        return msgspec.structs.asdict(self.row.facts)

    @property
    def policy(self) -> PolicyKey:
        return self.row.policy

    @property
    def warnings(self) -> list[str]:
        return self.row.warnings


def whole_record(line: bytes, file: str, number: int) -> TraceRecord | Malformed:
    """A line read in full (every field kept), for `--decision`."""
    parsed = parse_line(line)
    if isinstance(parsed, str):
        return Malformed(file, number, parsed)
    return TraceRecord(file, number, _ANY.decode(line), parsed)
