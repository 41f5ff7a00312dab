"""Pipes as asyncio streams: a child's stdio, the proxy's own standard input and output.

The event loop reads and writes a pipe (or a socket, or a terminal) itself, with no thread;
`StreamWriter.drain` applies back-pressure, so a peer that stops reading slows the writer
down instead of filling memory.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import BinaryIO, Final

__all__ = ["READ_SIZE", "chunks", "pipe_reader", "pipe_writer"]


READ_SIZE: Final = 65_536


async def pipe_reader(file: BinaryIO | int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """A reader on `file` (a pipe's file object, or a descriptor, which is duplicated), and
    its transport: closing the transport closes the file."""
    loop = asyncio.get_running_loop()
    if isinstance(file, int):
        file = os.fdopen(os.dup(file), "rb", buffering=0)
    reader = asyncio.StreamReader(limit=READ_SIZE * 4)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), file)
    return reader, transport


async def pipe_writer(file: BinaryIO | int) -> asyncio.StreamWriter:
    """A writer on `file` (a pipe's file object, or a descriptor, which is duplicated)."""
    loop = asyncio.get_running_loop()
    if isinstance(file, int):
        file = os.fdopen(os.dup(file), "wb", buffering=0)
    transport, flow = await loop.connect_write_pipe(_FlowControl, file)
    return asyncio.StreamWriter(transport, flow, None, loop)


async def chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The bytes of `reader` as they come, until end-of-file or a broken pipe."""
    while True:
        try:
            chunk = await reader.read(READ_SIZE)
        except (ConnectionError, OSError):
            return
        if not chunk:
            return
        yield chunk


class _FlowControl(asyncio.streams.FlowControlMixin):
    """What `StreamWriter.drain` needs of a write-only pipe's protocol (the stdlib recipe)."""
