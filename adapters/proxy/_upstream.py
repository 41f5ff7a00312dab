"""The server's side of the proxy: a child process over stdio, or a Streamable HTTP endpoint.

Over stdio the relay reads and writes raw lines (the bounded framing of
`visiongate.kernel._framing`, with the top-level id scan for oversized lines): a message it does not
change costs one parse and is written as it came. The child is started and stopped by `mcp._child`
(its own process group, a watchdog that stops the group if this process dies, stdin closed, SIGTERM,
SIGKILL) with the proxy's environment (a client's `env` block for the server reaches it through the
proxy); its stderr is relayed line by line through the strict sanitizer. The command may be started
before the proxy has loaded anything else (`spawn` is synchronous), so the server boots while the
gate loads; a server that could not be started is an `Unstarted` upstream, whose reason the relay
gives to the client's `initialize`.

Over HTTP the official SDK's `streamable_http_client` does the transport (sessions, SSE
streams, resumption); the relay hands it each line as the SDK's message model and reads its
messages back as JSON. The SDK is imported only for `--url`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final, Protocol, TextIO

import anyio
import anyio.abc

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._framing import Lines, Oversized

from ..mcp._child import DEFAULT_GRACE_S, Child, relay_stderr
from ..mcp._pipes import chunks
from ..sanitize._line import untrusted_line
from ._idscan import TopLevelId, top_level_id

__all__ = ["Unstarted", "Upstream", "UpstreamClosed", "http_upstream", "stdio_upstream"]

_SDK_STAND_IN: Final = "Server returned an error response"
"""What the SDK's Streamable HTTP client answers for an HTTP refusal without a JSON-RPC body."""
_REFUSAL_BYTES: Final = 4096
"""How much of a refusal's body is read to say what it was."""
_SSE_FRAMING_BYTES: Final = 64 * 1024
_HTTP_STEP_S: Final = 30.0
_HTTP_READ_S: Final = 300.0


class UpstreamClosed(VisiongateError, ConnectionError):
    """The server can no longer be written to."""


class Upstream(Protocol):
    """What the relay needs of a server connection."""

    label: str
    transport: str

    async def send(self, message: bytes) -> None: ...

    def lines(self) -> AsyncIterator[bytes | Oversized]: ...

    async def gone(self) -> str:
        """Why the server went away, for the client: `exited with status 3`, ..."""
        ...


class StdioUpstream:
    """A server started as a child process; raw lines both ways."""

    transport = "stdio"

    def __init__(self, child: Child, writer: asyncio.StreamWriter, limit: int) -> None:
        self.label = child.label
        self._child = child
        self._writer = writer
        self._limit = limit
        self._lock = anyio.Lock()

    async def send(self, message: bytes) -> None:
        try:
            async with self._lock:
                self._writer.writelines((message, b"\n"))
                await self._writer.drain()
        except (ConnectionError, OSError, RuntimeError) as error:
            raise UpstreamClosed(str(error) or "its input is closed") from None

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        lines = Lines(self._limit, skim=TopLevelId)
        async for chunk in chunks(await self._child.stdout()):
            for _, line in lines.feed(chunk):
                yield line

    async def gone(self) -> str:
        status = await self._child.exit_status()
        return f"exited with status {status}" if status is not None else "closed the connection"


class Unstarted:
    """A server that could not be started: the relay answers the client with the reason."""

    transport = "stdio"

    def __init__(self, label: str, reason: str) -> None:
        self.label = label
        self.reason = reason

    async def send(self, message: bytes) -> None:
        raise UpstreamClosed(self.reason)

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        return
        yield  # an async generator that ends at once

    async def gone(self) -> str:
        return f"could not be started ({self.reason})"


@asynccontextmanager
async def stdio_upstream(
    child: Child,
    *,
    max_message_bytes: int,
    errlog: TextIO | None = None,
    grace: float = DEFAULT_GRACE_S,
) -> AsyncIterator[StdioUpstream]:
    """Relay through the started `child`; on the way out it is stopped, whatever happened."""
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(relay_stderr, child, errlog if errlog is not None else sys.stderr)
            try:
                yield StdioUpstream(child, await child.stdin(), max_message_bytes)
            finally:
                with anyio.CancelScope(shield=True):
                    await child.stop(grace)
                group.cancel_scope.cancel()
    finally:
        if child.returncode is None:  # cancelled before the shielded stop could run
            child.kill()


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
        self._failure = ""
        self._refusal = ""
        """The last HTTP refusal the SDK would report only generically (`on_response`)."""
        self.ended = anyio.Event()
        """Set when the transport task is over (its failure, if any, is known by then)."""

    def attach(self, read: Any, write: Any) -> None:
        self._read, self._write = read, write

    async def on_response(self, response: Any) -> None:
        """The HTTP client's response hook: a refusal the SDK reports only as "Server returned
        an error response" (any status over 400 whose body is not JSON-RPC) is said here, with
        its status and the start of its body, and named in the error the client gets."""
        if response.status_code < 400 or response.status_code == 404:
            return  # 404 the SDK names itself (no such method, or the session ended)
        if response.headers.get("content-type", "").lower().startswith("application/json"):
            return  # the SDK reads that body and relays the server's own JSON-RPC error
        said = b""
        with contextlib.suppress(Exception):  # the status alone says enough
            async for chunk in response.aiter_bytes():
                said += chunk
                if len(said) >= _REFUSAL_BYTES:
                    break
        text = untrusted_line(said[:_REFUSAL_BYTES].decode("utf-8", "replace"), 200)
        method = getattr(response.request, "method", "a request")
        self._refusal = f"HTTP {response.status_code} to {method}" + (f": {text}" if text else "")
        said_here = f"the MCP server `{self.label}` answered {self._refusal}"
        print(f"visiongate proxy: {said_here}", file=sys.stderr)

    def fail(self, error: BaseException) -> None:
        reason = untrusted_line(_first_cause(error), 300)
        self._failure = reason
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
                message = self._named(item.message)
                line = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                yield line if len(line) <= self._limit else Oversized(len(line), top_level_id(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def _named(self, message: Any) -> Any:
        """The SDK's stand-in error for an HTTP refusal, with the refusal it stands in for."""
        error = getattr(message, "error", None)
        if error is not None and self._refusal and error.message == _SDK_STAND_IN:
            named = error.model_copy(update={"message": f"{_SDK_STAND_IN} ({self._refusal})"})
            return message.model_copy(update={"error": named})
        return message

    async def gone(self) -> str:
        with anyio.move_on_after(2):  # the SDK closes our streams before its error reaches us
            await self.ended.wait()
        return f"cannot be reached ({self._failure})" if self._failure else "closed the connection"


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
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    upstream = HttpUpstream(url, max_message_bytes)

    async def transport(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        started = False
        try:
            # The SDK's own client settings (`mcp.shared._httpx_utils`, private): 30 s to
            # connect, write and wait for a connection, 300 s to read (a stream stays open).
            timeout = httpx2.Timeout(_HTTP_STEP_S, read=_HTTP_READ_S)
            client = httpx2.AsyncClient(headers=dict(headers), timeout=timeout)
            client.event_hooks["response"].append(upstream.on_response)
            # An SSE event carries one message: as large as `--max-message-bytes` allows (the
            # SDK's own default, 1 MiB, fails a full-page screenshot), plus the event's framing.
            events = max_message_bytes + _SSE_FRAMING_BYTES
            opened = streamable_http_client(url, http_client=client, max_sse_event_size=events)
            async with client, opened as (read, write):
                upstream.attach(read, write)
                task_status.started()
                started = True
                await upstream.done.wait()
        except Exception as error:  # the SDK's task group, failed: the server is gone
            upstream.fail(error)
            if not started:
                task_status.started()
        finally:
            upstream.ended.set()

    async with anyio.create_task_group() as group:
        await group.start(transport)
        try:
            yield upstream
        finally:
            upstream.done.set()
