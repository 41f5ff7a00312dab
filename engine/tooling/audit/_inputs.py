"""Where an audit reads from: files, globs, directories, gzip files and standard input.

Inputs are read as a stream of lines split on `\\n` only (never `str.splitlines()`, which
also breaks at U+2028 and friends inside a record's strings), in chunks, so memory stays
bounded whatever the size of the trace. A line longer than `MAX_LINE_BYTES` is not kept in
memory: it is reported as one malformed line.
"""

from __future__ import annotations

import glob
import gzip
import io
import sys
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final, cast

CHUNK_BYTES: Final = 1 << 20
MAX_LINE_BYTES: Final = 16 << 20
TRACE_SUFFIXES: Final = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
"""What a directory contributes: trace files and their gzipped closed siblings."""
STDIN: Final = "-"

TOO_LONG: Final = b"\n"
"""Stands for a line that was longer than `MAX_LINE_BYTES` (no real line holds a `\n`)."""


class InputError(Exception):
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
                raw = open(self.name, "rb")  # noqa: SIM115 - closed by `lines` below
            except OSError as error:
                raise InputError(f"cannot read `{self.shown}`: {_why(error)}") from None
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


def lines(source: TraceInput) -> Iterator[bytes]:
    """Every line of `source` without its `\\n` (`TOO_LONG` for an oversized one); raises
    `InputError` when the input cannot be read to its end (e.g. a truncated gzip file)."""
    stream = source.open()
    try:
        yield from _split(stream)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"cannot read `{source.shown}` to its end: {_why(error)}") from None
    finally:
        if source.name != STDIN:
            stream.close()


def _split(stream: BinaryIO) -> Iterator[bytes]:
    carry = b""
    skipping = False  # inside a line already reported as too long
    while chunk := stream.read(CHUNK_BYTES):
        pieces = chunk.split(b"\n")
        pieces[0] = carry + pieces[0]
        carry = pieces.pop()
        for piece in pieces:
            if skipping:
                skipping = False
                continue
            yield piece
        if len(carry) > MAX_LINE_BYTES:
            if not skipping:
                yield TOO_LONG
            carry, skipping = b"", True
    if carry and not skipping:
        yield carry


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return str(error) or type(error).__name__
