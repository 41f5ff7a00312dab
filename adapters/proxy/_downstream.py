"""The client's side of the proxy: JSON-RPC lines on standard input and standard output.

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
from typing import Final

from visiongate._errors import VisiongateError

from ._jsonrpc import Lines, Oversized

__all__ = ["ClientGone", "Downstream", "open_downstream", "protect_stdout"]

_READ_SIZE: Final = 65_536


class ClientGone(VisiongateError, ConnectionError):
    """The client stopped reading: its standard output reader is gone."""


@contextmanager
def protect_stdout() -> Iterator[None]:
    """Send anything printed to `sys.stdout` to standard error while the proxy runs."""
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved


class Downstream:
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

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's lines until it closes standard input."""
        lines = Lines(self._limit)
        while chunk := await self._read():
            for line in lines.feed(chunk):
                yield line

    async def _read(self) -> bytes:
        if self._reader is not None:
            return await self._reader.read(_READ_SIZE)
        return await asyncio.to_thread(os.read, self._input_fd, _READ_SIZE)

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

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


async def open_downstream(limit: int, input_fd: int = 0, output_fd: int = 1) -> Downstream:
    """The client's streams on `input_fd` and `output_fd`, read and written by the loop when
    they are pipes, sockets or terminals, else in a thread (a regular file, /dev/null)."""
    loop = asyncio.get_running_loop()
    writer = await _writer(loop, output_fd) if _pollable(output_fd) else None
    if not _pollable(input_fd):
        return Downstream(
            _at_end() if _closed(input_fd) else None, writer, limit, input_fd, output_fd
        )
    reader = asyncio.StreamReader(limit=_READ_SIZE * 4)
    read_file = os.fdopen(os.dup(input_fd), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), read_file)
    return Downstream(reader, writer, limit, input_fd, output_fd)


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


async def _writer(loop: asyncio.AbstractEventLoop, output_fd: int) -> asyncio.StreamWriter:
    write_file = os.fdopen(os.dup(output_fd), "wb", buffering=0)
    transport, flow = await loop.connect_write_pipe(_FlowControl, write_file)
    return asyncio.StreamWriter(transport, flow, None, loop)


class _FlowControl(asyncio.streams.FlowControlMixin):
    """What `StreamWriter.drain` needs of a write-only pipe's protocol (the stdlib recipe)."""
