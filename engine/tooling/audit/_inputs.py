"""Where an audit reads from: files, globs, directories, gzip files and standard input.

Inputs are read as a stream of lines split on `\\n` only (never `str.splitlines()`, which
also breaks at U+2028 and friends inside a record's strings), in chunks, so memory stays
bounded whatever the size of the trace. A line longer than `MAX_LINE_BYTES` is not kept in
memory: it is reported as one malformed line. A path is read only as a regular file, opened
without blocking (`kernel._files.open_regular_file`): a FIFO would wait for a writer for
ever and `/dev/zero` never ends, so both are refused unread (a pipe is read as `-`).
"""

from __future__ import annotations

import glob
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final, cast

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._files import open_regular_file
from visiongate.kernel._framing import Framed, Lines, Oversized

CHUNK_BYTES: Final = 1 << 20
MAX_LINE_BYTES: Final = 16 << 20
TRACE_SUFFIXES: Final = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
"""What a directory contributes: trace files and their gzipped closed siblings."""
STDIN: Final = "-"

__all__ = [
    "CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "STDIN",
    "InputError",
    "Lines",
    "Oversized",
    "TraceInput",
    "expand",
    "framing",
    "lines",
]


class InputError(VisiongateError):
    """A trace input cannot be read (missing, unreadable, a glob matching nothing)."""


@dataclass(frozen=True)
class TraceInput:
    """One stream of trace lines: a file path, or `-` for standard input."""

    name: str

    @property
    def shown(self) -> str:
        return "<stdin>" if self.name == STDIN else Path(self.name).as_posix()

    def open(self) -> BinaryIO:
        """The raw bytes (gzip recognized by its magic number, whatever the name)."""
        if self.name == STDIN:
            raw: BinaryIO = sys.stdin.buffer
        else:
            try:
                raw = open_regular_file(self.name)  # closed by `lines` below
            except OSError as error:
                raise InputError(
                    f"cannot read `{self.shown}`: {_why(error)}{_hint(error)}"
                ) from None
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast(Any, raw))
        if buffered.peek(2)[:2] == b"\x1f\x8b":
            return cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
        return cast(BinaryIO, buffered)


def expand(arguments: Sequence[str]) -> list[TraceInput]:
    """The inputs named by paths, globs, directories and `-`, in order; raises `InputError`
    for a path that does not exist or a glob that matches nothing."""
    found: list[TraceInput] = []
    for argument in arguments:
        found += _expand_one(argument)
    return found


def _expand_one(argument: str) -> list[TraceInput]:
    if argument == STDIN:
        return [TraceInput(STDIN)]
    path = Path(argument)
    if path.is_dir():
        files = sorted(item for item in path.iterdir() if item.name.endswith(TRACE_SUFFIXES))
        if not files:
            raise InputError(f"no trace files (`*.jsonl`, `*.jsonl.gz`) in `{argument}`")
        return [TraceInput(str(item)) for item in files]
    if path.exists():
        return [TraceInput(argument)]
    if glob.has_magic(argument):
        matches = sorted(glob.glob(argument, recursive=True))
        named = [match for match in matches if Path(match).is_file()]
        if not named:
            raise InputError(f"no file matches `{argument}`")
        return [TraceInput(match) for match in named]
    raise InputError(f"no such file: `{argument}`")


def framing() -> Lines:
    """The framing of a trace: lines of at most `MAX_LINE_BYTES`, blank ones skipped."""
    return Lines(MAX_LINE_BYTES)


def lines(
    source: TraceInput, start: int = 0, stop: int | None = None, into: Lines | None = None
) -> Iterator[Framed]:
    """(number, line) for every non-blank line of `source`, without its `\\n` (`Oversized`
    for one past `MAX_LINE_BYTES`); raises `InputError` when the input cannot be read to its
    end (e.g. a truncated gzip file). `start` and `stop` read a byte range of a plain file
    (both at line starts; numbers count from `start`). `into.number` then says how many
    lines were read, blank ones included."""
    stream = source.open()
    try:
        if start:
            stream.seek(start)
        framed = into if into is not None else framing()
        for chunk in _chunks(stream, None if stop is None else stop - start):
            yield from framed.feed(chunk)
        yield from framed.finish()
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read `{source.shown}` to its end: {_why(error)}") from None
    finally:
        if source.name != STDIN:
            # A GzipFile given a file object does not close it: the file is closed here too.
            given = getattr(stream, "fileobj", None)
            stream.close()
            if given is not None:
                given.close()


def _chunks(stream: BinaryIO, budget: int | None) -> Iterator[bytes]:
    while budget is None or budget > 0:
        chunk = stream.read(CHUNK_BYTES if budget is None else min(CHUNK_BYTES, budget))
        if not chunk:
            return
        if budget is not None:
            budget -= len(chunk)
        yield chunk


def plain_size(source: TraceInput) -> int | None:
    """The size of a plain (not gzip) regular file, which can be read in byte ranges."""
    if source.name == STDIN:
        return None
    try:
        with open_regular_file(source.name) as stream:
            if stream.read(2) == b"\x1f\x8b":
                return None
            return os.fstat(stream.fileno()).st_size
    except OSError:
        return None


def line_start_after(source: TraceInput, position: int) -> int | None:
    """The first line start at or after `position` (None past the end or within a line
    longer than `MAX_LINE_BYTES`)."""
    if position <= 0:
        return 0
    with open_regular_file(source.name) as stream:
        stream.seek(position - 1)
        scanned = 0
        while scanned <= MAX_LINE_BYTES:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                return None
            found = chunk.find(b"\n")
            if found != -1:
                return position + scanned + found
            scanned += len(chunk)
    return None


def _hint(error: OSError) -> str:
    """What to do about a FIFO or a device: pipe it to `-` (a trace read as it is written)."""
    why = error.strerror or ""
    if "not a regular file" in why and "directory" not in why:
        return "; to read a stream, pipe it to `-`"
    return ""


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]  # `a FIFO` stays
    return str(error) or type(error).__name__
