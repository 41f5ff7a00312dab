"""A bounded stdio transport for the SDK's `ClientSession`: the server as a child process.

The SDK's own `stdio_client` joins each chunk onto the unfinished line and splits it again, so
a long line costs time quadratic in its length (64 MB took 57 s), and no line is too long for
it. This transport reads bytes, looks for the newline only in the new chunk, and refuses a
message past `max_message_bytes` (then reads and drops the rest of the output, so the server
is not stuck on a full pipe): time and memory are linear in what is accepted.

The server runs in its own session (process group). Stopping it closes its stdin, gives it
`grace` seconds to exit, then sends SIGTERM to the whole group and, `grace` seconds later,
SIGKILL: no server (nor any child it started) is left running, whatever it does. Stopping is
shielded, so a timeout, Ctrl-C or SIGTERM delivered as a cancellation still stops the server.
Its stderr is relayed line by line through the strict sanitizer, each line clipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Final, TextIO

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter
from pydantic import ValidationError

from visiongate._errors import VisiongateError

from ..sanitize._line import untrusted_line

__all__ = ["DEFAULT_GRACE_S", "MessageTooLarge", "StdioState", "bounded_stdio"]

DEFAULT_GRACE_S: Final = 2.0
"""How long a server gets to exit after stdin closes, and again after SIGTERM."""
_READ_SIZE: Final = 65_536
_STDERR_LINE_CHARS: Final = 2_000
_EXCERPT_CHARS: Final = 80
_POLL_S: Final = 0.01


class MessageTooLarge(VisiongateError, ValueError):
    """The server sent a message past the size limit; the connection was given up."""


@dataclass
class StdioState:
    """What the transport saw, for error messages: the only mutable part of a connection."""

    label: str
    process: Process
    failure: Exception | None = None
    """Why the transport gave up on the server (a message too large), if it did."""
    malformed: int = 0
    """Lines that were not JSON-RPC messages."""
    first_malformed: str = ""
    stderr_sink: TextIO | None = field(default=None, repr=False)

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def exit_status(self, wait_s: float = 0.5) -> int | None:
        """The exit status, waiting up to `wait_s` for a process that is closing."""
        with anyio.move_on_after(wait_s):
            while self.process.returncode is None:
                await anyio.sleep(_POLL_S)
        return self.process.returncode


class _Lines:
    """Newline-delimited messages from chunks, each at most `limit` bytes (linear time)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._pieces: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        lines: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._keep(chunk[start:end])
            lines.append(b"".join(self._pieces))
            self._pieces, self._size = [], 0
            start = end + 1
        self._keep(chunk[start:])
        return lines

    def _keep(self, piece: bytes) -> None:
        if self._size + len(piece) > self._limit:
            raise MessageTooLarge(self._size + len(piece))
        if piece:
            self._pieces.append(piece)
            self._size += len(piece)


@asynccontextmanager
async def bounded_stdio(
    parameters: StdioServerParameters,
    *,
    label: str,
    max_message_bytes: int,
    grace: float = DEFAULT_GRACE_S,
    errlog: TextIO | None = None,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
        StdioState,
    ]
]:
    """Start the server; yield the session's read and write streams and the transport state.

    Raises `OSError` when the server cannot be started.
    """
    process = await anyio.open_process(
        [parameters.command, *parameters.args],
        env=get_default_environment() | (parameters.env or {}),
        cwd=parameters.cwd,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    state = StdioState(label, process, stderr_sink=errlog if errlog is not None else sys.stderr)
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_stdout, process, to_session, state, max_message_bytes)
            group.start_soon(_write_stdin, process, from_session, to_session)
            group.start_soon(_relay_stderr, process, state)
            try:
                yield session_reads, session_writes, state
            finally:
                with anyio.CancelScope(shield=True):
                    await stop_process(process, grace)
                group.cancel_scope.cancel()
    finally:
        for stream in (to_session, session_reads, session_writes, from_session):
            stream.close()


async def _read_stdout(
    process: Process,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    state: StdioState,
    limit: int,
) -> None:
    assert process.stdout is not None
    lines = _Lines(limit)
    async with to_session:
        try:
            async for chunk in _chunks(process.stdout):
                for line in lines.feed(chunk):
                    message = _parse(line, state)
                    if message is not None:
                        await to_session.send(message)
        except MessageTooLarge as error:
            state.failure = MessageTooLarge(
                f"the MCP server `{state.label}` sent a message of more than {limit} bytes "
                f"({int(str(error))} read so far); it was not read, and the call was stopped "
                "(raise `max_message_bytes`, `--max-message-bytes` on the command line)"
            )
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the session is gone
    # The session now sees the connection end; drain so the server is not stuck writing.
    async for _ in _chunks(process.stdout):
        pass


async def _chunks(stream: ByteReceiveStream) -> AsyncIterator[bytes]:
    while True:
        try:
            yield await stream.receive(_READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            return


def _parse(line: bytes, state: StdioState) -> SessionMessage | None:
    if not line.strip():
        return None
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError):
        # Not fatal (servers print stray lines); counted and named if a request then times out.
        state.malformed += 1
        if not state.first_malformed:
            text = line[: _EXCERPT_CHARS * 4].decode("utf-8", "replace")
            state.first_malformed = untrusted_line(text, _EXCERPT_CHARS)
        return None
    return SessionMessage(message)


async def _write_stdin(
    process: Process,
    from_session: MemoryObjectReceiveStream[SessionMessage],
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert process.stdin is not None
    try:
        async with from_session:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send(data.encode("utf-8") + b"\n")
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        # The server stopped reading: end the session's stream so no request waits forever.
        await to_session.aclose()


async def _relay_stderr(process: Process, state: StdioState) -> None:
    assert process.stderr is not None
    pending = b""
    async for chunk in _chunks(process.stderr):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            _show(line, state)
        # A line with no end in sight is shown in pieces, so memory stays bounded.
        if len(pending) > _STDERR_LINE_CHARS:
            _show(pending, state)
            pending = b""
    if pending:
        _show(pending, state)


def _show(line: bytes, state: StdioState) -> None:
    text = untrusted_line(line.decode("utf-8", "replace"), _STDERR_LINE_CHARS)
    if text and state.stderr_sink is not None:
        print(text, file=state.stderr_sink, flush=True)


async def stop_process(process: Process, grace: float = DEFAULT_GRACE_S) -> None:
    """Close stdin, wait `grace`, SIGTERM the group, wait `grace`, SIGKILL the group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    for next_signal in (signal.SIGTERM, _KILL):
        if await _exited_within(process, grace):
            break
        _signal_group(process, next_signal)
    await _exited_within(process, grace)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()


_KILL: Final = getattr(signal, "SIGKILL", signal.SIGTERM)


async def _exited_within(process: Process, seconds: float) -> bool:
    # Polled, not `process.wait()`: that also waits for the pipes, which a grandchild that
    # inherited them can hold open after the server itself has exited.
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


def _signal_group(process: Process, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":  # pragma: no cover - no process groups there
            process.terminate() if signum == signal.SIGTERM else process.kill()
        else:
            os.killpg(process.pid, signum)
