"""`--decision ID`: find one decision in a large trace without decoding every line.

The trace is scanned in chunks for the id as a JSON string start (`"<id>`), which runs at
the speed of a byte search; only lines holding it are decoded and checked. An id that JSON
would write with escapes (quotes, backslashes, non-ASCII) falls back to decoding every line.
All inputs are read to their end, so a duplicated id (e.g. from forked workers before ids
were reseeded) shows up as several decisions rather than the first one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ._inputs import CHUNK_BYTES, MAX_LINE_BYTES, InputError, TraceInput
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
    stream = source.open()
    try:
        yield from _scan(stream.read, needle)
    except (OSError, EOFError, ValueError) as error:
        raise InputError(f"cannot read `{source.shown}` to its end: {error}") from None
    finally:
        if source.name != "-":
            stream.close()


def _scan(read: Callable[[int], bytes], needle: bytes | None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each complete line holding `needle`, chunk by chunk."""
    lines_before = 0  # lines entirely before `buffer`
    buffer = b""
    while chunk := read(CHUNK_BYTES):
        buffer += chunk
        end = buffer.rfind(b"\n") + 1  # complete lines are buffer[:end]
        if end == 0:
            if len(buffer) > MAX_LINE_BYTES:
                buffer = b""  # an oversized line cannot be a record; skip what we have
            continue
        yield from _hits(buffer, end, needle, lines_before)
        lines_before += buffer.count(b"\n", 0, end)
        buffer = buffer[end:]
    if buffer:
        yield from _hits(buffer + b"\n", len(buffer) + 1, needle, lines_before)


def _hits(
    buffer: bytes, end: int, needle: bytes | None, lines_before: int
) -> Iterator[tuple[int, bytes]]:
    if needle is None:
        for offset, line in enumerate(buffer[:end].split(b"\n")[:-1]):
            if line.strip():
                yield lines_before + offset + 1, line
        return
    position = buffer.find(needle, 0, end)
    while position != -1:
        start = buffer.rfind(b"\n", 0, position) + 1
        stop = buffer.find(b"\n", position)
        yield lines_before + buffer.count(b"\n", 0, start) + 1, buffer[start:stop]
        position = buffer.find(needle, stop, end)
