"""The server's side of the proxy: a child process over stdio, or a Streamable HTTP endpoint.

Over stdio the relay reads and writes raw lines (the bounded framing of `_jsonrpc.Lines`): a
message it does not change costs one parse and is written as it came. The child runs in its
own process group with the proxy's environment (a client's `env` block for the server reaches
it through the proxy), its stderr relayed line by line through the strict sanitizer, and it is
stopped like every server this project starts: stdin closed, SIGTERM, then SIGKILL to its
group (`mcp._stdio.stop_process`).

Over HTTP the official SDK's `streamable_http_client` does the transport (sessions, SSE
streams, resumption); the relay hands it each line as the SDK's message model and reads its
messages back as JSON.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol, TextIO

import anyio
import anyio.abc
from anyio.abc import Process

from visiongate._errors import VisiongateError

from ..mcp._session import server_label
from ..mcp._stdio import DEFAULT_GRACE_S, StdioState, _chunks, _relay_stderr, stop_process
from ..sanitize._line import untrusted_line
from ._jsonrpc import Lines, Oversized

__all__ = ["Upstream", "UpstreamClosed", "http_upstream", "stdio_upstream"]


class UpstreamClosed(VisiongateError, ConnectionError):
    """The server can no longer be written to."""


class Upstream(Protocol):
    """What the relay needs of a server connection."""

    label: str
    transport: str

    async def send(self, message: bytes) -> None: ...

    def lines(self) -> AsyncIterator[bytes | Oversized]: ...

    async def exit_status(self) -> int | None: ...


class StdioUpstream:
    """A server started as a child process; raw lines both ways."""

    transport = "stdio"

    def __init__(self, label: str, process: Process, limit: int) -> None:
        self.label = label
        self._process = process
        self._limit = limit
        self._lock = anyio.Lock()

    async def send(self, message: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            async with self._lock:
                await stdin.send(message + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as error:
            raise UpstreamClosed(str(error) or "its input is closed") from None

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        stdout = self._process.stdout
        assert stdout is not None
        lines = Lines(self._limit)
        async for chunk in _chunks(stdout):
            for line in lines.feed(chunk):
                yield line

    async def exit_status(self) -> int | None:
        with anyio.move_on_after(0.5):
            while self._process.returncode is None:
                await anyio.sleep(0.01)
        return self._process.returncode


@asynccontextmanager
async def stdio_upstream(
    command: Sequence[str],
    *,
    max_message_bytes: int,
    env: Mapping[str, str] | None = None,
    errlog: TextIO | None = None,
    grace: float = DEFAULT_GRACE_S,
) -> AsyncIterator[StdioUpstream]:
    """Start the server; on the way out it is stopped, whatever happened. Raises `OSError`
    naming the command when it cannot be started."""
    label = server_label(command)
    try:
        process = await anyio.open_process(
            list(command),
            env=dict(env if env is not None else os.environ),
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        raise OSError(f"cannot start the MCP server `{label}`: {reason}") from None
    state = StdioState(label, process, stderr_sink=errlog if errlog is not None else sys.stderr)
    async with anyio.create_task_group() as group:
        group.start_soon(_relay_stderr, process, state)
        try:
            yield StdioUpstream(label, process, max_message_bytes)
        finally:
            with anyio.CancelScope(shield=True):
                await stop_process(process, grace)
            group.cancel_scope.cancel()


class HttpUpstream:
    """A Streamable HTTP server through the SDK's transport.

    The transport runs in a task of its own: when the server goes away the SDK's task group
    fails with the connection error, and that must end this side's lines (so the relay answers
    what is in flight and stops) instead of cancelling the relay mid-answer."""

    transport = "http"

    def __init__(self, url: str, limit: int) -> None:
        self.label = untrusted_line(url, 200)
        self._limit = limit
        self._read: Any = None
        self._write: Any = None
        self.done = anyio.Event()
        """Set when this side is finished with the server: the transport then closes."""

    def attach(self, read: Any, write: Any) -> None:
        self._read, self._write = read, write

    def fail(self, error: BaseException) -> None:
        reason = untrusted_line(_first_cause(error), 300)
        print(
            f"visiongate proxy: the MCP server `{self.label}` cannot be reached: {reason}",
            file=sys.stderr,
        )

    async def send(self, message: bytes) -> None:
        from mcp.shared.message import SessionMessage
        from mcp.types import jsonrpc_message_adapter

        parsed = jsonrpc_message_adapter.validate_json(message, by_name=False)
        if self._write is None:  # the transport failed before it started
            raise UpstreamClosed("the connection could not be opened")
        try:
            await self._write.send(SessionMessage(parsed))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            raise UpstreamClosed(str(error) or "the connection is closed") from None

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        # Ends when the transport closes its streams: on the way out, or when it failed.
        if self._read is None:
            return
        try:
            async for item in self._read:
                if isinstance(item, Exception):
                    text = untrusted_line(str(item) or type(item).__name__, 300)
                    print(
                        f"visiongate proxy: the MCP server `{self.label}`: {text}", file=sys.stderr
                    )
                    continue
                line = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                yield line if len(line) <= self._limit else Oversized(len(line), line[:512])
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def exit_status(self) -> int | None:
        return None


def _first_cause(error: BaseException) -> str:
    """The innermost reason of an exception group (the SDK's task group wraps the httpx error)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return str(error) or type(error).__name__


@asynccontextmanager
async def http_upstream(
    url: str, headers: Mapping[str, str], *, max_message_bytes: int
) -> AsyncIterator[HttpUpstream]:
    """Connect to a Streamable HTTP server with the SDK's transport; the session is ended
    (HTTP DELETE) on the way out. A server that goes away ends the upstream's lines."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    upstream = HttpUpstream(url, max_message_bytes)

    async def transport(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        started = False
        try:
            client = create_mcp_http_client(headers=dict(headers))
            async with client, streamable_http_client(url, http_client=client) as (read, write):
                upstream.attach(read, write)
                task_status.started()
                started = True
                await upstream.done.wait()
        except Exception as error:  # the SDK's task group, failed: the server is gone
            upstream.fail(error)
            if not started:
                task_status.started()

    async with anyio.create_task_group() as group:
        await group.start(transport)
        try:
            yield upstream
        finally:
            upstream.done.set()
