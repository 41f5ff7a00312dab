"""The client's side of the proxy: JSON-RPC lines on standard input and standard output.

The relay reads and writes any `Downstream`; this module's is the stdio one. The gateway's
(one Streamable HTTP session each) lives in `gateway._client`.

Standard output carries protocol messages and nothing else: the relay writes each message with
one call, so two messages never interleave, and `protect_stdout` points `sys.stdout` at
standard error for the whole session, so a stray `print` (ours or a library's) cannot corrupt
the stream. Pipes and terminals are read and written by the event loop itself; anything else
(a regular file given as input, say) through a thread.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Protocol

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._framing import Lines, Oversized

from ..mcp._pipes import READ_SIZE, pipe_reader, pipe_writer
from ._idscan import TopLevelId

__all__ = ["ClientGone", "Downstream", "StdioDownstream", "open_downstream", "protect_stdout"]


class ClientGone(VisiongateError, ConnectionError):
    """The client stopped reading: its standard output reader is gone, or its session ended."""


@contextmanager
def protect_stdout() -> Iterator[None]:
    """Send anything printed to `sys.stdout` to standard error while the proxy runs."""
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved


class Downstream(Protocol):
    """What the relay needs of the client's side: this process's stdio (`StdioDownstream`) or
    one session of the gateway's Streamable HTTP endpoint (`gateway._client`)."""

    first_sent: asyncio.Event
    """Set once the first message reached the client (the handshake's answer, usually)."""

    def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's messages, one JSON-RPC message (or batch) each, until it is done;
        `ClientGone` when nobody will read an answer any more."""
        ...

    async def send(self, message: bytes) -> None:
        """Deliver one message; raises `ClientGone` once nobody reads."""
        ...

    async def close(self) -> None: ...


class StdioDownstream:
    """Reads the client's messages and writes messages to it (descriptors 0 and 1)."""

    def __init__(
        self,
        reader: asyncio.StreamReader | None,
        writer: asyncio.StreamWriter | None,
        limit: int,
        input_fd: int = 0,
        output_fd: int = 1,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._limit = limit
        self._input_fd = input_fd
        self._output_fd = output_fd
        self._write_lock = asyncio.Lock()
        self.sent = 0
        """Messages written so far."""
        self.first_sent = asyncio.Event()
        """Set once the first message reached the client (the handshake's answer, usually)."""

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's lines until it closes standard input."""
        lines = Lines(self._limit, skim=TopLevelId)
        while chunk := await self._read():
            for _, line in lines.feed(chunk):
                yield line

    async def _read(self) -> bytes:
        if self._reader is not None:
            return await self._reader.read(READ_SIZE)
        return await asyncio.to_thread(os.read, self._input_fd, READ_SIZE)

    async def send(self, message: bytes) -> None:
        """Write one message and its newline; raises `ClientGone` once nobody reads."""
        try:
            if self._writer is not None:
                self._writer.writelines((message, b"\n"))
                await self._writer.drain()
            else:
                async with self._write_lock:
                    await asyncio.to_thread(_write_all, self._output_fd, message + b"\n")
        except (BrokenPipeError, ConnectionResetError, OSError) as error:
            raise ClientGone(str(error)) from None
        self.sent += 1
        self.first_sent.set()

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


async def open_downstream(limit: int, input_fd: int = 0, output_fd: int = 1) -> StdioDownstream:
    """The client's streams on `input_fd` and `output_fd`, read and written by the loop when
    they are pipes, sockets or terminals, else in a thread (a regular file, /dev/null)."""
    writer = await pipe_writer(output_fd) if _pollable(output_fd) else None
    if not _pollable(input_fd):
        return StdioDownstream(
            _at_end() if _closed(input_fd) else None, writer, limit, input_fd, output_fd
        )
    reader, _ = await pipe_reader(input_fd)
    return StdioDownstream(reader, writer, limit, input_fd, output_fd)


def _pollable(descriptor: int) -> bool:
    """A pipe, a socket or a terminal: what the event loop can wait on (not a regular file,
    nor /dev/null, which epoll refuses)."""
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(descriptor)


def _closed(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return True
    return False


def _at_end() -> asyncio.StreamReader:
    """No standard input at all (a closed descriptor): a session that has already ended."""
    reader = asyncio.StreamReader()
    reader.feed_eof()
    return reader
