"""A bounded stdio transport for the SDK's `ClientSession`: the server as a child process.

The SDK's own `stdio_client` joins each chunk onto the unfinished line and splits it again, so
a long line costs time quadratic in its length (64 MB took 57 s), and no line is too long for
it. This transport frames lines with `visiongate.kernel._framing.Lines` (the newline is looked for
only in the new chunk) and gives up on a message past `max_message_bytes` as soon as the limit
is passed (`oversized="raise"`), then reads and drops the rest of the output, so the server is
not stuck on a full pipe: time and memory are linear in what is accepted.

The server is started and stopped by `_child` (its own process group, a watchdog, stdin
closed, SIGTERM then SIGKILL to the group). Stopping is shielded, so a timeout, Ctrl-C or
SIGTERM delivered as a cancellation still stops the server. Its stderr is relayed line by line
through the strict sanitizer, each line clipped.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Final, TextIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter
from pydantic import ValidationError

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._framing import Lines, LineTooLong

from ..sanitize._line import untrusted_line
from ._child import DEFAULT_GRACE_S, Child, relay_stderr, spawn
from ._pipes import chunks

__all__ = [
    "DEFAULT_GRACE_S",
    "MessageTooLarge",
    "StdioState",
    "bounded_stdio",
]

_EXCERPT_CHARS: Final = 80


class MessageTooLarge(VisiongateError, ValueError):
    """The server sent a message past the size limit; the connection was given up."""


@dataclass
class StdioState:
    """What the transport saw, for error messages: the only mutable part of a connection."""

    label: str
    child: Child
    failure: Exception | None = None
    """Why the transport gave up on the server (a message too large), if it did."""
    malformed: int = 0
    """Lines that were not JSON-RPC messages."""
    first_malformed: str = ""
    stderr_sink: TextIO | None = field(default=None, repr=False)

    @property
    def returncode(self) -> int | None:
        return self.child.returncode

    async def exit_status(self, wait_s: float = 0.5) -> int | None:
        """The exit status, waiting up to `wait_s` for a process that is closing."""
        return await self.child.exit_status(wait_s)


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

    Raises `OSError` (`SpawnError`) when the server cannot be started.
    """
    child = spawn(
        [parameters.command, *parameters.args],
        label=label,
        env=get_default_environment() | (parameters.env or {}),
        cwd=str(parameters.cwd) if parameters.cwd is not None else None,
    )
    state = StdioState(label, child, stderr_sink=errlog if errlog is not None else sys.stderr)
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_stdout, child, to_session, state, max_message_bytes)
            group.start_soon(_write_stdin, child, from_session, to_session)
            group.start_soon(relay_stderr, child, state.stderr_sink)
            try:
                yield session_reads, session_writes, state
            finally:
                with anyio.CancelScope(shield=True):
                    await child.stop(grace)
                group.cancel_scope.cancel()
    finally:
        for stream in (to_session, session_reads, session_writes, from_session):
            stream.close()
        if child.returncode is None:  # cancelled before the shielded stop could run
            child.kill()


async def _read_stdout(
    child: Child,
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
    state: StdioState,
    limit: int,
) -> None:
    reader = await child.stdout()
    lines = Lines(limit, oversized="raise")
    async with to_session:
        try:
            async for chunk in chunks(reader):
                for _, line in lines.feed(chunk):
                    assert isinstance(line, bytes)  # oversized lines raise instead
                    message = _parse(line, state)
                    if message is not None:
                        await to_session.send(message)
        except LineTooLong as error:
            state.failure = MessageTooLarge(
                f"the MCP server `{state.label}` sent a message of more than {limit} bytes "
                f"({error.size} read so far); it was not read, and the call was stopped "
                "(raise `max_message_bytes`, `--max-message-bytes` on the command line)"
            )
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the session is gone
    # The session now sees the connection end; drain so the server is not stuck writing.
    async for _ in chunks(reader):
        pass


def _parse(line: bytes, state: StdioState) -> SessionMessage | None:
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except (ValidationError, ValueError, RecursionError):
        # Not fatal (servers print stray lines); counted and named if a request then times out.
        state.malformed += 1
        if not state.first_malformed:
            text = line[: _EXCERPT_CHARS * 4].decode("utf-8", "replace")
            state.first_malformed = untrusted_line(text, _EXCERPT_CHARS)
        return None
    return SessionMessage(message)


async def _write_stdin(
    child: Child,
    from_session: MemoryObjectReceiveStream[SessionMessage],
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    writer = await child.stdin()
    try:
        async with from_session:
            async for message in from_session:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                writer.writelines((data.encode("utf-8"), b"\n"))
                await writer.drain()
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        # The server stopped reading: end the session's stream so no request waits forever.
        await to_session.aclose()
    finally:
        # The writer may have been opened after a cancelled call already stopped the server
        # (a hang at `initialize`): close it here too, or its pipe outlives the session.
        with suppress(RuntimeError):  # the event loop is already closed
            writer.close()
