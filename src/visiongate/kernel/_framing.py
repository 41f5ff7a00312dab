"""Newline framing: the lines of a byte stream, each bounded in size, in linear time.

The one home for splitting JSON lines (JSON-RPC over stdio, both ways in the proxy and in the
MCP client's transport; decision records in a trace read by `audit`). It lives at the root of
the package because both the engine (audit) and the adapters (transports) use it, and neither
may import the other's internals.

Bytes come in chunks of any size; a line is what lies between two `\\n` (never
`str.splitlines()`, which also breaks at U+2028 inside a record's strings). Every reader here
ignores blank lines, so blank lines are skipped, and runs of them are skipped in C (a regular
expression over the run, `bytes.count` for the line numbers): a file of a million empty lines
costs what reading it costs. A line's number counts every line, blank ones included.

A line longer than `limit` is never kept in memory. What happens to it is the one difference
between the readers, named `oversized`:

- `"skip"` (the proxy, audit): the rest of the line is skipped to its newline and it comes out
  as `Oversized`, with its size and what a `skim` (a bounded streaming scan, e.g. of a
  JSON-RPC message's top-level `id`) found in it;
- `"raise"` (the MCP client's transport, which then gives up on the server): `LineTooLong` is
  raised as soon as the limit is passed, without waiting for a newline that may never come.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from visiongate.kernel._errors import VisiongateError

__all__ = ["Framed", "LineTooLong", "Lines", "Oversized", "Skim"]

_BLANK_RUN: Final = re.compile(rb"(?:[ \t\r\f\v]*+\n)++")
"""One or more complete blank lines (the bytes `bytes.isspace` counts as space)."""
_NEWLINE_BLOCKS: Final = tuple(b"\n" * size for size in (65_536, 4_096, 256, 16))
"""A run of empty lines is first skipped by comparing blocks (`memcmp`, at memory speed)."""
_SPACE: Final = frozenset(b" \t\n\r\f\v")


class LineTooLong(VisiongateError, ValueError):
    """A line passed the limit (`oversized="raise"`); `size` is how much of it was read."""

    def __init__(self, size: int) -> None:
        super().__init__(f"a line of more than {size} bytes")
        self.size = size


class Skim(Protocol):
    """A bounded scan that sees every byte of an oversized line, piece by piece."""

    def feed(self, piece: bytes) -> None: ...

    def result(self) -> object: ...


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line past the limit, skipped: its size and what the skim found in it (or None)."""

    size: int
    found: object = None


Framed = tuple[int, "bytes | Oversized"]
"""A line's number (from 1) and the line without its newline, or `Oversized`."""


class Lines:
    """Feed chunks, get the complete non-blank lines they end; see the module docstring."""

    def __init__(
        self,
        limit: int,
        *,
        oversized: Literal["skip", "raise"] = "skip",
        skim: Callable[[], Skim] | None = None,
    ) -> None:
        self._limit = limit
        self._raise = oversized == "raise"
        self._skim_factory = skim
        self.number = 0
        """Lines ended so far, blank ones included."""
        self._pieces: list[bytes] = []
        self._size = 0
        """Bytes of the open line (the one not yet ended by a newline)."""
        self._skipping = False
        self._skim: Skim | None = None

    def feed(self, chunk: bytes) -> list[Framed]:
        out: list[Framed] = []
        start = 0
        if self._size or self._skipping:  # a line is open: its end comes first
            end = chunk.find(b"\n")
            if end < 0:
                self._keep(chunk)
                return out
            self._keep(chunk[:end])
            self._close(out)
            start = end + 1
        self._complete_lines(chunk, start, out)
        return out

    def finish(self) -> list[Framed]:
        """The last line, if the input ended without its newline (audit reads it; a protocol
        peer that never ended its message has not sent it)."""
        out: list[Framed] = []
        if self._size or self._skipping:
            self._close(out)
        return out

    def _complete_lines(self, chunk: bytes, start: int, out: list[Framed]) -> None:
        size = len(chunk)
        limit = self._limit
        while start < size:
            if chunk[start] in _SPACE:
                skipped = self._skip_blank_lines(chunk, start)
                if skipped > start:
                    start = skipped
                    continue
            end = chunk.find(b"\n", start)
            if end < 0:
                self._keep(chunk[start:])
                return
            if end - start > limit:
                self._keep(chunk[start:end])
                self._close(out)
            else:
                self.number += 1
                out.append((self.number, chunk[start:end]))
            start = end + 1

    def _skip_blank_lines(self, chunk: bytes, start: int) -> int:
        """Where the run of complete blank lines at `start` ends (`start` if there is none)."""
        position = start
        for block in _NEWLINE_BLOCKS:
            while chunk.startswith(block, position):
                position += len(block)
        self.number += position - start
        blank = _BLANK_RUN.match(chunk, position)
        if blank is None:
            return position
        self.number += chunk.count(b"\n", position, blank.end())
        return blank.end()

    def _keep(self, piece: bytes) -> None:
        if self._skipping:
            self._size += len(piece)
            if self._skim is not None:
                self._skim.feed(piece)
            return
        if self._size + len(piece) > self._limit:
            if self._raise:
                raise LineTooLong(self._size + len(piece))
            self._skipping = True
            self._skim = self._skim_factory() if self._skim_factory is not None else None
            for kept in (*self._pieces, piece):
                if self._skim is not None:
                    self._skim.feed(kept)
            self._pieces = []
        elif piece:
            self._pieces.append(piece)
        self._size += len(piece)

    def _close(self, out: list[Framed]) -> None:
        self.number += 1
        if self._skipping:
            found = self._skim.result() if self._skim is not None else None
            out.append((self.number, Oversized(self._size, found)))
        else:
            line = self._pieces[0] if len(self._pieces) == 1 else b"".join(self._pieces)
            if line and not line.isspace():
                out.append((self.number, line))
        self._pieces, self._size, self._skipping, self._skim = [], 0, False, None
