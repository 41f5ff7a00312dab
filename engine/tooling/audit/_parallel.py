"""Large plain trace files read by several processes: each counts a byte range of whole
lines, and the parent merges the counts in order (line numbers shifted, samples kept in
trace order). The result is the one a single reader gets; only the wall time differs.

Workers are forked, so this is for the command line (a process with one thread);
`aggregate` stays single-process for library callers, and so does a system that cannot fork
(Windows). Gzip files and standard input cannot
be split: each of those is read whole by one worker (stdin: by the parent, in order).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from typing import Final

from visiongate.kernel._platform import can_fork

from ._aggregate import Builder, Query, aggregate
from ._inputs import STDIN, TraceInput, line_start_after, plain_size
from ._result import AuditResult

SPLIT_BYTES: Final = 64 << 20
"""Files smaller than this are read by one worker: splitting them would cost more than it
saves."""


@dataclass(frozen=True)
class Part:
    index: int
    """Which input (the same file named twice is counted twice, from line 1 each time)."""
    source: TraceInput
    start: int
    stop: int | None


def plan(inputs: list[TraceInput], jobs: int, split_bytes: int | None = None) -> list[Part]:
    """The inputs cut into parts: a large plain file into `jobs` ranges of whole lines."""
    split_bytes = SPLIT_BYTES if split_bytes is None else split_bytes
    parts: list[Part] = []
    for index, source in enumerate(inputs):
        size = plain_size(source)
        if size is None or size < split_bytes or jobs < 2:
            parts.append(Part(index, source, 0, None))
            continue
        cuts = [0]
        for number in range(1, jobs):
            cut = line_start_after(source, size * number // jobs)
            if cut is not None and cuts[-1] < cut < size:
                cuts.append(cut)
        bounds: list[int | None] = [*cuts[1:], None]
        parts += [
            Part(index, source, start, stop) for start, stop in zip(cuts, bounds, strict=True)
        ]
    return parts


def aggregate_in_parallel(
    inputs: Iterable[TraceInput], query: Query, policy_override: str | None, jobs: int
) -> AuditResult:
    """`aggregate` with up to `jobs` worker processes."""
    sources = list(inputs)
    parts = plan(sources, jobs)
    if jobs < 2 or len(parts) < 2 or not can_fork() or any(s.name == STDIN for s in sources):
        return aggregate(sources, query, policy_override)
    builder = Builder(query, policy_override)
    offsets: dict[int, int] = {}
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        counted = pool.map(_count, parts, repeat(query), repeat(policy_override))
        for part, partial in zip(parts, counted, strict=True):
            offset = offsets.get(part.index, 0)
            builder.merge(partial, offset)
            offsets[part.index] = offset + partial.lines_read
    return builder.result()


def _count(part: Part, query: Query, policy_override: str | None) -> Builder:
    builder = Builder(query, policy_override)
    builder.read(part.source, part.start, part.stop)
    return builder
