"""What the filters of an audit may name, and what they matched.

A closed-set filter (`--lane`, `--source`) names a value of the vocabulary: a typo there is a
usage error with a did-you-mean, never "0 decisions". An open-set filter (`--provider`,
`--model`, `--rule`, `--policy-sha`) names whatever the traces hold, so a value no record
carries is said in the summary, with the closest value the traces do hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from visiongate.kernel._suggest import closest, did_you_mean

from ..._vocabulary import LANES, SOURCES
from ._read import Row
from ._result import NO_RULE, NO_SOURCE, Unmatched, model_label

CLOSED: Final = {"lane": (*LANES,), "source": (*SOURCES, NO_SOURCE)}
"""Filter -> the values it may name."""
SEEN_LIMIT: Final = 1000
"""Distinct values kept per open filter to suggest from; a fleet's providers fit many times."""
_HEX: Final = re.compile(r"[0-9a-f]{1,64}")


@dataclass(frozen=True)
class Query:
    """Which decisions count, and how to group them."""

    since: datetime | None = None
    until: datetime | None = None
    providers: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    lanes: frozenset[str] = frozenset()
    rules: frozenset[str] = frozenset()
    sources: frozenset[str] = frozenset()
    policy_shas: tuple[str, ...] = ()
    """sha256 prefixes."""
    group_by: tuple[str, ...] = ()

    def admits(self, row: Row) -> bool:
        return (
            (self.since is None or row.timestamp >= self.since)
            and (self.until is None or row.timestamp <= self.until)
            and (not self.providers or (row.provider or "") in self.providers)
            and (not self.models or _model_matches(row, self.models))
            and (not self.lanes or row.lane in self.lanes)
            and (not self.rules or (row.rule or NO_RULE) in self.rules)
            and (not self.sources or (row.source or NO_SOURCE) in self.sources)
            and (not self.policy_shas or row.policy.sha256.startswith(self.policy_shas))
        )


def _model_matches(row: Row, models: frozenset[str]) -> bool:
    return (row.model or "") in models or model_label(row.provider, row.model) in models


def check_closed(option: str, values: Iterable[str]) -> None:
    """`ValueError` naming the first value `option` cannot take, with a did-you-mean."""
    choices = CLOSED[option]
    for value in values:
        if value not in choices:
            raise ValueError(
                f"`--{option} {value}` is not a {option}: {did_you_mean(value, choices)}"
            )


def check_sha_prefixes(values: Iterable[str]) -> None:
    for value in values:
        if not _HEX.fullmatch(value):
            raise ValueError(
                f"`--policy-sha {value}` is not a sha256 prefix (lower-case hex, as the "
                "summary shows it)"
            )


class FilterHits:
    """For each open filter given, which of its values some record carried (whatever the other
    filters said), and a bounded set of the values seen, to suggest from."""

    def __init__(self, query: Query) -> None:
        wanted = {
            "provider": query.providers,
            "model": query.models,
            "rule": query.rules,
            "policy-sha": frozenset(query.policy_shas),
        }
        self.wanted = {option: values for option, values in wanted.items() if values}
        self.hit: dict[str, set[str]] = {option: set() for option in self.wanted}
        self.seen: dict[str, set[str]] = {option: set() for option in self.wanted}

    def __bool__(self) -> bool:
        return bool(self.wanted)

    def note(self, row: Row) -> None:
        for option, wanted in self.wanted.items():
            for value in _values(option, row):
                seen = self.seen[option]
                if len(seen) < SEEN_LIMIT:
                    seen.add(value)
                if option == "policy-sha":
                    self.hit[option].update(p for p in wanted if value.startswith(p))
                elif value in wanted:
                    self.hit[option].add(value)

    def merge(self, other: FilterHits) -> None:
        for option in self.wanted:
            self.hit[option] |= other.hit[option]
            room = SEEN_LIMIT - len(self.seen[option])
            self.seen[option] |= set(sorted(other.seen[option])[: max(room, 0)])

    def unmatched(self) -> tuple[Unmatched, ...]:
        return tuple(
            Unmatched(option, value, _closest(value, self.seen[option]))
            for option, wanted in self.wanted.items()
            for value in sorted(wanted)
            if value not in self.hit[option]
        )


def _values(option: str, row: Row) -> tuple[str, ...]:
    if option == "provider":
        return (row.provider or "",)
    if option == "model":
        return (row.model or "", model_label(row.provider, row.model))
    if option == "rule":
        return (row.rule or NO_RULE,)
    return (row.policy.sha256,)


def _closest(value: str, seen: set[str]) -> str | None:
    return closest(value, sorted(v for v in seen if v))
