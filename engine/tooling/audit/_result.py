"""The result of an audit: aggregates first, rendered after (text, JSON, CSV, and later HTML).

`AuditResult` holds no record. Its heart is the cube: decisions counted by day, provider,
model, lane, rule, facts, source and policy, from which every count of the report (and any
group-by without `hour`) is derived. Findings keep a count and the first few decisions as
samples, in trace order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Final, NamedTuple

from ._policies import PolicyStatus, Standing
from ._read import Facts, Malformed, PolicyKey

NO_RULE: Final = "(default)"
NO_SOURCE: Final = "(not recorded)"
NO_MODEL: Final = "(facts given directly)"


class CubeKey(NamedTuple):
    day: date
    provider: str | None
    model: str | None
    lane: str
    rule: str | None
    facts: Facts
    source: str | None
    policy: PolicyKey


@dataclass(frozen=True)
class Sample:
    """A decision a finding points at."""

    decision_id: str
    file: str
    line: int
    timestamp: datetime
    provider: str | None
    model: str | None
    catalog: str
    rule: str | None
    policy: PolicyKey
    note: str | None = None
    """What a finding says about this decision, when more than its facts (a refusal's reason)."""


@dataclass(frozen=True)
class Finding:
    count: int = 0
    samples: tuple[Sample, ...] = ()


@dataclass(frozen=True)
class MediaCounts:
    """What the adapters did with the images of some decisions (their `execution` sections)."""

    decisions: int = 0
    images: int = 0
    """Images the tools produced (`images_found`)."""
    attached: int = 0
    refused: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    """Bytes the tools produced, and bytes that reached the model as pixels."""

    @property
    def kept_out(self) -> int:
        """Images that did not reach the model as pixels (text lane, refused, over the limit)."""
        return max(self.images - self.attached, 0)

    @property
    def bytes_saved(self) -> int:
        return max(self.bytes_before - self.bytes_after, 0)

    def __add__(self, other: MediaCounts) -> MediaCounts:
        return MediaCounts(*(a + b for a, b in zip(self.row(), other.row(), strict=True)))

    def row(self) -> tuple[int, ...]:
        return (
            self.decisions,
            self.images,
            self.attached,
            self.refused,
            self.bytes_before,
            self.bytes_after,
        )


class MediaKey(NamedTuple):
    day: date
    source: str | None
    lane: str


class HourKey(NamedTuple):
    day: date
    hour: int
    lane: str


class MinuteKey(NamedTuple):
    day: date
    hour: int
    minute: int
    lane: str


@dataclass(frozen=True)
class PolicyUse:
    """Decisions made under one policy content, and how that policy stands now."""

    policy: PolicyKey
    count: int
    status: PolicyStatus

    @property
    def stale(self) -> bool:
        return self.status.standing is Standing.STALE


def model_label(provider: str | None, model: str | None) -> str:
    return f"{provider}/{model}" if provider or model else NO_MODEL


def policy_label(policy: PolicyKey) -> str:
    return f"{policy.name} {policy.version} {policy.sha256[:12]}"


# What `--group-by` can name, and how each reads a cube key (hour is counted separately).
DIMENSIONS: Final[Mapping[str, Callable[[CubeKey], str]]] = {
    "provider": lambda key: key.provider or NO_MODEL,
    "model": lambda key: model_label(key.provider, key.model),
    "lane": lambda key: key.lane,
    "rule": lambda key: key.rule or NO_RULE,
    "policy": lambda key: policy_label(key.policy),
    "source": lambda key: key.source or NO_SOURCE,
    "mode": lambda key: key.facts.mode,
    "catalog": lambda key: key.facts.catalog,
    "aux": lambda key: key.facts.aux,
    "path": lambda key: key.facts.path,
    "day": lambda key: key.day.isoformat(),
}
GROUP_NAMES: Final = (*DIMENSIONS, "hour")


@dataclass(frozen=True)
class Unmatched:
    """An open filter's value that no record in the inputs carried."""

    option: str
    value: str
    suggestion: str | None

    def __str__(self) -> str:
        close = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        return f"no decision matched --{self.option} {self.value}{close}"


@dataclass(frozen=True)
class AuditResult:
    decisions: int
    first: datetime | None
    last: datetime | None
    cube: Mapping[CubeKey, int]
    policies: tuple[PolicyUse, ...]
    stale: Finding
    unconfirmed_native: Finding
    """Native decisions for models the catalog calls `no_vision`, or `unknown` unless
    `image_input_mode: native` asked for them (the override for aliases it does not know)."""
    malformed: Finding
    malformed_lines: tuple[Malformed, ...]
    warnings: Mapping[str, int]
    warned_decisions: int
    lost_records: int
    amendments: int
    """Records written again for a decision already counted (`amended`)."""
    """Records the writers' trace sinks reported they could not write (`trace_errors`)."""
    execution: Mapping[str, int]
    sanitizer: Mapping[str, int]
    inputs: tuple[str, ...]
    input_errors: tuple[str, ...] = ()
    group_by: tuple[str, ...] = ()
    groups: Mapping[tuple[str, ...], Mapping[str, int]] = field(default_factory=dict)
    """Group values -> decisions by lane, for `--group-by`."""
    hours: Mapping[HourKey, int] = field(default_factory=dict)
    """Decisions by hour and lane, for lanes over time in a short trace."""
    minutes: Mapping[MinuteKey, int] | None = None
    """Decisions by minute and lane, for a trace of a few hours (None for a longer one)."""
    media: Mapping[MediaKey, MediaCounts] = field(default_factory=dict)
    """Images and bytes by day, source and lane."""
    refused_images: Finding = Finding()
    """Decisions in which an image was refused (corrupt, over a limit, withheld by the payload
    guard); samples carry the first reason. Not counted in `findings`: the gate worked."""
    route_refusals: Finding = Finding()
    """Decisions on a route that refuses images in tool results (`path=refuses`)."""
    unmatched: tuple[Unmatched, ...] = ()
    """Values of `--provider`, `--model`, `--rule`, `--policy-sha` that no record carried."""

    @property
    def findings(self) -> int:
        return self.stale.count + self.unconfirmed_native.count + self.malformed.count

    def counts(self, dimension: str) -> Counter[str]:
        """Decisions by one dimension (`lane`, `rule`, `source`, `model`, `day`, ...)."""
        read = DIMENSIONS[dimension]
        totals: Counter[str] = Counter()
        for key, count in self.cube.items():
            totals[read(key)] += count
        return totals

    def media_by(self, read: Callable[[MediaKey], str]) -> dict[str, MediaCounts]:
        """Image counts grouped by a reading of their key (`lambda key: key.lane`, ...)."""
        totals: dict[str, MediaCounts] = {}
        for key, counts in self.media.items():
            name = read(key)
            totals[name] = totals.get(name, MediaCounts()) + counts
        return totals

    def facts(self) -> Counter[Facts]:
        totals: Counter[Facts] = Counter()
        for key, count in self.cube.items():
            totals[key.facts] += count
        return totals
