"""`--decision ID`: find one decision in a large trace without decoding every line.

The trace is scanned in chunks for the id as a JSON string start (`"<id>`), which runs at
the speed of a byte search; only lines holding it are decoded and checked. An id that JSON
would write with escapes (quotes, backslashes, non-ASCII) falls back to decoding every line.
All inputs are read to their end, so a duplicated id (e.g. from forked workers before ids
were reseeded) shows up as several decisions rather than the first one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ._inputs import InputError, TraceInput, lines
from ._read import Malformed, TraceRecord, whole_record

KEPT: Final = 10
"""Matches kept in full; more are only counted."""


@dataclass(frozen=True)
class Search:
    exact: tuple[TraceRecord, ...]
    prefixed: tuple[TraceRecord, ...]
    """Decisions whose id starts with the one asked for (used when none is exact)."""
    prefixed_count: int
    input_errors: tuple[str, ...] = ()

    @property
    def found(self) -> tuple[TraceRecord, ...]:
        return self.exact or self.prefixed


def find_decision(inputs: Iterable[TraceInput], decision_id: str) -> Search:
    """Every record whose id is `decision_id`, else those whose id starts with it."""
    needle = _needle(decision_id)
    exact: list[TraceRecord] = []
    prefixed: list[TraceRecord] = []
    prefixed_count = 0
    errors: list[str] = []
    for source in inputs:
        try:
            for record in _candidates(source, needle):
                if record.decision_id == decision_id:
                    exact.append(record)
                elif record.decision_id.startswith(decision_id):
                    prefixed_count += 1
                    if len(prefixed) < KEPT:
                        prefixed.append(record)
        except InputError as error:
            errors.append(str(error))
    if len(exact) > 1 and sum(1 for r in exact if r.row.amended is None) <= 1:
        # One decision and its amended records: the last one says what the payload carried.
        exact = exact[-1:]
    return Search(tuple(exact), tuple(prefixed), prefixed_count, tuple(errors))


def _needle(decision_id: str) -> bytes | None:
    plain = decision_id.isascii() and decision_id.isprintable()
    if not plain or '"' in decision_id or "\\" in decision_id:
        return None
    return b'"' + decision_id.encode("ascii")


def _candidates(source: TraceInput, needle: bytes | None) -> Iterator[TraceRecord]:
    """Records of `source` on lines that hold `needle` (every record when it is None)."""
    for number, line in _lines_holding(source, needle):
        record = whole_record(line, source.shown, number)
        if not isinstance(record, Malformed):
            yield record


def _lines_holding(source: TraceInput, needle: bytes | None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each line of `source` holding `needle` (every record's line
    when it is None); an oversized line is no record and is passed over."""
    try:
        for number, line in lines(source):
            if isinstance(line, bytes) and (needle is None or needle in line):
                yield number, line
    except InputError:
        raise
    except (OSError, EOFError, ValueError) as error:
        raise InputError(f"cannot read `{source.shown}` to its end: {error}") from None
