"""Decisions and their trace records.

A decision is built on the hot path, so it is a small slotted object that holds a reference
to the precomputed cell verdict; the JSON record is assembled only when asked for.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from ._compile import CellVerdict
from ._policy import Policy
from ._vocabulary import FACT_NAMES, Cell

SCHEMA_VERSION = 1

# Decision ids: a per-process prefix and a counter (uuid4 costs ~1.4 µs; this ~0.1 µs).
_PROCESS_PREFIX = secrets.token_hex(4)
_COUNTER = itertools.count(1)

GIVEN_PROVENANCE: Mapping[str, str] = MappingProxyType(
    {fact: "given directly (decide_facts)" for fact in FACT_NAMES}
)


@dataclass(frozen=True)
class PolicyRef:
    """Which policy decided: enough to find the exact file content again."""

    name: str
    version: str
    sha256: str
    path: str

    def as_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "version": self.version,
            "sha256": self.sha256,
            "path": self.path,
        }


@dataclass(frozen=True)
class DecisionContext:
    """Everything about a decision that is shared by many decisions: the policy in force, where
    the facts came from, warnings, and what the fact resolver knew (e.g. the provider route)."""

    policy: PolicyRef
    provenance: Mapping[str, str] = field(default_factory=lambda: GIVEN_PROVENANCE)
    warnings: tuple[str, ...] = ()
    provider: str | None = None
    model: str | None = None
    resolved: Any = None
    full_policy: Policy | None = None
    """The policy that decided, whose `execution` and `sanitize` carry the lane out: taken with
    the decision, so a reload in between cannot pair one policy's lane with another's settings."""


class Decision:
    """One decision: the lane, why, from which facts, under which policy.

    Built on the hot path, so it holds references to shared, precomputed values (the cell's
    verdict and a context) plus its own number and timestamp; the record is built on demand.
    """

    __slots__ = ("_cell", "_context", "_number", "_verdict", "timestamp")

    def __init__(self, verdict: CellVerdict, cell: Cell, context: DecisionContext) -> None:
        self._verdict = verdict
        self._cell = cell
        self._context = context
        self._number = next(_COUNTER)
        self.timestamp = time.time()

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
    def extra(self) -> Any:
        """What the fact resolver knew (`ResolvedFacts`, with the provider route), or None."""
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
        return f"{_PROCESS_PREFIX}-{self._number:08d}"

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


def format_timestamp(seconds: float) -> str:
    """RFC 3339 in UTC with microseconds, e.g. `2026-11-30T09:41:00.123456Z`."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


TraceSink = Callable[[dict[str, Any]], None]


class JsonlTrace:
    """Appends one JSON line per record to a file; safe to share between threads."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stream: IO[str] | None = None

    def __call__(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=False)
        with self._lock:
            if self._stream is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._stream = self.path.open("a", encoding="utf-8")
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            if self._stream is not None:
                self._stream.close()
                self._stream = None


def as_sink(trace: str | Path | TraceSink | None) -> TraceSink | None:
    """A trace sink from a path (JSONL file), a callable, or None (no tracing)."""
    if trace is None or callable(trace):
        return trace
    return JsonlTrace(trace)
