"""Decisions and their trace records.

A decision is built on the hot path, so it is a small slotted object that holds a reference
to the precomputed cell verdict; the JSON record is assembled only when asked for.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._compile import CellVerdict
from ._load import bundled_policy_text, is_bundled_policy
from ._policy import Policy, source_sha256
from ._vocabulary import FACT_NAMES, Cell
from .trace._encode import TraceSink, format_timestamp

if TYPE_CHECKING:
    from .facts import ResolvedFacts

__all__ = [
    "Decision",
    "DecisionContext",
    "DecisionIds",
    "PolicyRef",
    "TraceSink",
    "TraceSpec",
    "as_sink",
    "format_timestamp",
    "process_ids",
]

SCHEMA_VERSION = 1


class DecisionIds:
    """Decision ids: a prefix and a counter, `<prefix>-00000001` (uuid4 costs ~1.4 µs, this
    ~0.1 µs). A gate takes the process's (`process_ids()`) unless given its own: a test or a
    replay passes `DecisionIds("replay")` and gets the same ids at every run."""

    def __init__(self, prefix: str | None = None, start: int = 1) -> None:
        self._fixed = prefix
        self.prefix = ""
        self.counter = itertools.count(start)
        self._start = start
        self.reseed()

    def reseed(self) -> None:
        """A fresh random prefix (for the process's ids) and a counter from the start."""
        # `secrets.token_hex(8)` is exactly this; `secrets` would import `random` and `base64`
        # into every `decide` (about 1 ms, issue 37).
        self.prefix = self._fixed if self._fixed is not None else os.urandom(8).hex()
        self.counter = itertools.count(self._start)

    def take(self) -> tuple[str, int]:
        return self.prefix, next(self.counter)


# Process-wide on purpose: ids must be unique per process, whatever gate made the decision.
# The prefix is drawn again in a forked child (`os.register_at_fork`), so forked workers,
# which share everything the parent had at fork time, never share ids; 64 random bits keep
# prefixes apart across a fleet of processes.
_IDS = DecisionIds()
if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork either
    os.register_at_fork(after_in_child=_IDS.reseed)


def process_ids() -> DecisionIds:
    """The process's decision ids (random prefix, reseeded after a fork)."""
    return _IDS


GIVEN_PROVENANCE: Mapping[str, str] = MappingProxyType(
    {fact: "given directly (decide_facts)" for fact in FACT_NAMES}
)


@dataclass(frozen=True)
class PolicyRef:
    """Which policy decided: its name, version and content hash, and where it came from.

    A policy shipped with the package is recorded as `bundled` (its bundled name) with the
    package version, never by a path: a relative path would name a different file wherever
    the trace is read. A policy file is recorded by its absolute path."""

    name: str
    version: str
    sha256: str
    path: str | None = None
    bundled: str | None = None
    package_version: str | None = None

    @classmethod
    def of(cls, policy: Policy) -> PolicyRef:
        bundled = bundled_name(policy.path, policy.sha256)
        if bundled is not None:
            return cls(policy.name, policy.version, policy.sha256, None, bundled, package_version())
        return cls(policy.name, policy.version, policy.sha256, str(Path(policy.path).absolute()))

    def as_dict(self) -> dict[str, str]:
        found = {"name": self.name, "version": self.version, "sha256": self.sha256}
        if self.bundled is not None:
            found["bundled"] = self.bundled
            found["package_version"] = self.package_version or "unknown"
        if self.path is not None:
            found["path"] = self.path
        return found


def bundled_name(path: str, sha256: str) -> str | None:
    """The bundled policy loaded as `path` with this content, or None.

    The loader names a bundled policy `policies/<name>.yaml`; a file of the same relative
    name counts as bundled only if it has the bundled content, so the record never claims
    content it did not have."""
    name = path.removeprefix("policies/").removesuffix(".yaml")
    if name == path or not is_bundled_policy(name):
        return None
    return name if _bundled_sha256(name) == sha256 else None


@lru_cache(maxsize=32)
def _bundled_sha256(name: str) -> str:
    return source_sha256(bundled_policy_text(name))


@lru_cache(maxsize=1)
def package_version() -> str:
    """The installed visiongate version (recorded with a bundled policy)."""
    # The package's own constant, which tests/test_cli_imports.py checks against the installed
    # metadata: reading that metadata imports `importlib.metadata` and `email` (25 ms a start).
    from visiongate import __version__

    return __version__


@dataclass(frozen=True)
class DecisionContext:
    """Everything about a decision that is shared by many decisions: the policy in force, where
    the facts came from, warnings, and what the fact resolver knew (e.g. the provider route)."""

    policy: PolicyRef
    provenance: Mapping[str, str] = field(default_factory=lambda: GIVEN_PROVENANCE)
    warnings: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    resolved: ResolvedFacts | None = None
    """The facts resolved for a provider and model; None for facts given directly."""
    full_policy: Policy | None = None
    """The policy that decided, whose `execution` and `sanitize` carry the lane out: taken with
    the decision, so a reload in between cannot pair one policy's lane with another's settings."""


class Decision:
    """One decision: the lane, why, from which facts, under which policy.

    Built on the hot path, so it holds references to shared, precomputed values (the cell's
    verdict and a context) plus its own id and timestamp, given by the gate that decided
    (from its clock and ids, see `Gate.load`); the record is built on demand.
    """

    __slots__ = ("_cell", "_context", "_number", "_prefix", "_verdict", "timestamp")

    def __init__(
        self,
        verdict: CellVerdict,
        cell: Cell,
        context: DecisionContext,
        timestamp: float | None = None,
        prefix: str | None = None,
        number: int | None = None,
    ) -> None:
        self._verdict = verdict
        self._cell = cell
        self._context = context
        if prefix is None or number is None:
            prefix, number = _IDS.take()
        self._prefix = prefix
        self._number = number
        self.timestamp = time.time() if timestamp is None else timestamp

    @property
    def policy(self) -> PolicyRef:
        return self._context.policy

    @property
    def provenance(self) -> Mapping[str, str]:
        return self._context.provenance

    @property
    def warnings(self) -> tuple[str, ...]:
        return self._context.warnings

    @property
    def provider(self) -> str | None:
        return self._context.provider

    @property
    def model(self) -> str | None:
        return self._context.model

    @property
    def full_policy(self) -> Policy | None:
        """The policy in force when deciding (execution and sanitize settings included)."""
        return self._context.full_policy

    @property
    def extra(self) -> ResolvedFacts | None:
        """What the fact resolver knew (`ResolvedFacts`, with the provider route), or None for
        a decision on facts given directly (`decide_facts`)."""
        return self._context.resolved

    @property
    def lane(self) -> str:
        return self._verdict.lane

    @property
    def rule(self) -> str | None:
        return self._verdict.rule

    @property
    def reason(self) -> str:
        return self._verdict.reason

    @property
    def matched(self) -> tuple[str, ...]:
        return self._verdict.matched

    @property
    def default_used(self) -> bool:
        return self._verdict.rule is None

    @property
    def cell(self) -> Cell:
        return self._cell

    @property
    def facts(self) -> dict[str, str]:
        return dict(zip(FACT_NAMES, self._cell, strict=True))

    @property
    def decision_id(self) -> str:
        return f"{self._prefix}-{self._number:08d}"

    def record(self, **additions: Any) -> dict[str, Any]:
        """The versioned trace record (one JSON object); `additions` are appended as fields."""
        record: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "decision_id": self.decision_id,
            "timestamp": format_timestamp(self.timestamp),
            "policy": self.policy.as_dict(),
        }
        if self.provider is not None:
            record["provider"] = self.provider
            record["model"] = self.model
        record.update(
            facts=self.facts,
            provenance=dict(self.provenance),
            rule=self.rule,
            matched=list(self.matched),
            reason=self.reason,
            lane=self.lane,
            default_used=self.default_used,
            warnings=list(self.warnings),
        )
        record.update(additions)
        return record

    def __repr__(self) -> str:
        return f"Decision(lane={self.lane!r}, rule={self.rule!r}, facts={self.facts!r})"


TraceSpec = str | Path | TraceSink | Sequence[str | Path | TraceSink] | None
"""What `Gate.load(trace=...)` takes: a JSONL path, a sink, several of these, or None."""


def as_sink(trace: TraceSpec) -> TraceSink | None:
    """A trace sink from a path (JSONL file), a sink, several of these, or None (no tracing).

    The project's own sinks count and report their failures; any other callable is wrapped
    so that its exceptions are counted and logged too: tracing never fails a decision."""
    if trace is None:
        return None
    # The sinks (and msgspec, their encoder) are imported for a gate that traces only.
    from .trace import FanOut, GuardedSink, JsonlTrace

    if isinstance(trace, str | Path):
        return JsonlTrace(trace)
    if callable(trace):
        return trace if _reports_failures(trace) else GuardedSink(trace)
    sinks = [sink for item in trace if (sink := as_sink(item)) is not None]
    return sinks[0] if len(sinks) == 1 else FanOut(sinks)


def _reports_failures(sink: TraceSink) -> bool:
    from .trace import DeliveryFailures

    return isinstance(getattr(sink, "failures", None), DeliveryFailures)
