"""An MCP client session in which every request ends in bounded time with a clear error.

`open_session` starts the server over the bounded stdio transport and yields a
`BoundedSession`: the SDK's `ClientSession`, with each request (the handshake included, and
the `tools/list` the SDK sends after a tool call to check structured output) under a
deadline. What a misbehaving server does becomes one error, never a hang or a traceback, and
every word of the server's in it is cleaned (`untrusted_line`):

| the server ...                                   | raises                                  |
|--------------------------------------------------|-----------------------------------------|
| does not answer within the timeout (or answers   | `TimeoutError`                          |
| with the wrong id, which is the same thing)      |                                         |
| answers with a JSON-RPC error                    | `ServerError` (an `mcp.MCPError`)       |
| sends a result of the wrong shape                | `ValueError` naming the field           |
| sends a message past `max_message_bytes`         | `ValueError` (`MessageTooLarge`)        |
| exits or closes its output                       | `ConnectionError`                       |

`TimeoutError` and `ConnectionError` are `OSError`s: `visiongate mcp call` reports all of these
as bad input (exit 2).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, TextIO

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.types import CONNECTION_CLOSED, CallToolResult, ErrorData, InitializeResult
from pydantic import ValidationError

from visiongate.kernel._errors import VisiongateError

from ..sanitize._line import STRICT, untrusted_line
from ..sanitize._listings import sanitize_error_data
from ..sanitize._sanitizer import Sanitizer
from ._child import server_label
from ._stdio import StdioState, bounded_stdio

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_REQUEST_TIMEOUT_S",
    "BoundedSession",
    "McpLimits",
    "ServerError",
    "open_session",
    "server_label",
]

DEFAULT_CONNECT_TIMEOUT_S: Final = 30.0
DEFAULT_REQUEST_TIMEOUT_S: Final = 120.0
DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024
_MESSAGE_CHARS: Final = 300


@dataclass(frozen=True)
class McpLimits:
    """How long and how much a server may take."""

    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S
    """Starting the server and the `initialize` handshake."""
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S
    """Each request after that (`tools/call`, `tools/list`, ...)."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """The longest message (one JSON-RPC line) accepted from the server."""

    def __post_init__(self) -> None:
        for name in ("connect_timeout", "request_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"`{name}` must be above 0 seconds")
        if self.max_message_bytes < 1024:
            raise ValueError("`max_message_bytes` must be at least 1024")

    @classmethod
    def of(
        cls,
        timeout: float | None = None,
        connect_timeout: float | None = None,
        max_message_bytes: int | None = None,
    ) -> McpLimits:
        """Limits from optional values: `timeout` bounds each request and, unless
        `connect_timeout` is given, the handshake too."""
        connect = connect_timeout if connect_timeout is not None else timeout
        return cls(
            connect_timeout=connect if connect is not None else DEFAULT_CONNECT_TIMEOUT_S,
            request_timeout=timeout if timeout is not None else DEFAULT_REQUEST_TIMEOUT_S,
            max_message_bytes=(
                max_message_bytes if max_message_bytes is not None else DEFAULT_MAX_MESSAGE_BYTES
            ),
        )


class ServerError(VisiongateError, MCPError):
    """A JSON-RPC error from the server; its message and data are already sanitized."""

    def __init__(self, error: ErrorData, *, server: str, method: str) -> None:
        super().__init__(error.code, error.message, error.data)
        self.server = server
        self.method = method

    def __str__(self) -> str:
        return (
            f"the MCP server `{self.server}` answered `{self.method}` with error "
            f"{self.code}: {self.message}"
        )


class BoundedSession(ClientSession):
    """`ClientSession` with a deadline on every request and errors a person can read."""

    def __init__(self, state: StdioState, limits: McpLimits, **streams: Any) -> None:
        super().__init__(**streams)
        self._state = state
        self._limits = limits

    @property
    def label(self) -> str:
        return self._state.label

    async def send_request(self, request: Any, result_type: Any, *args: Any, **kwargs: Any) -> Any:
        method = str(getattr(request, "method", "request"))
        seconds = self._timeout_for(method)
        try:
            with anyio.fail_after(seconds):
                return await super().send_request(request, result_type, *args, **kwargs)
        except TimeoutError:
            raise TimeoutError(self._timed_out(method, seconds)) from None
        except MCPError as error:
            raise await self._protocol_error(method, error) from None
        except ValidationError as error:
            raise ValueError(self._malformed(method, error)) from None

    async def initialize(self) -> InitializeResult:
        try:
            return await super().initialize()
        except RuntimeError as error:
            # An unsupported protocol version: the message quotes the server's answer.
            raise ValueError(self._said("`initialize`", str(error))) from None

    async def validate_tool_result(self, name: str, result: CallToolResult) -> None:
        try:
            await super().validate_tool_result(name, result)
        except RuntimeError as error:
            # Structured content against the tool's output schema: both come from the server.
            raise ValueError(self._said(f"tool `{untrusted_line(name, 60)}`", str(error))) from None

    def _timeout_for(self, method: str) -> float:
        if method == "initialize":
            return self._limits.connect_timeout
        return self._limits.request_timeout

    def _timed_out(self, method: str, seconds: float) -> str:
        message = f"the MCP server `{self.label}` did not answer `{method}` within {seconds:g}s"
        if self._state.malformed:
            message += (
                f" (it wrote {self._state.malformed} line(s) that are not JSON-RPC messages, "
                f"the first: `{self._state.first_malformed}`)"
            )
        return message + "; the server was stopped (raise the timeout with `--timeout`)"

    async def _protocol_error(self, method: str, error: MCPError) -> Exception:
        if self._state.failure is not None:
            return self._state.failure
        if error.code == CONNECTION_CLOSED and error.message == "Connection closed":
            status = await self._state.exit_status()
            exited = f" (it exited with status {status})" if status is not None else ""
            return ConnectionError(
                f"the MCP server `{self.label}` closed the connection during `{method}`{exited}"
            )
        clean = sanitize_error_data(error.error, Sanitizer(STRICT))
        message = untrusted_line(clean.message, _MESSAGE_CHARS)
        data = ErrorData(code=clean.code, message=message, data=clean.data)
        return ServerError(data, server=self.label, method=method)

    def _malformed(self, method: str, error: ValidationError) -> str:
        first = min(error.errors(), key=lambda item: len(item["loc"]))
        where = ".".join(str(part) for part in first["loc"]) or "(the result)"
        problem = str(first["msg"])
        problem = problem[:1].lower() + problem[1:]
        return (
            f"the MCP server `{self.label}` sent a malformed `{method}` result: field "
            f"`{untrusted_line(where, 80)}`: {untrusted_line(problem, 120)}"
        )

    def _said(self, what: str, text: str) -> str:
        said = untrusted_line(text, _MESSAGE_CHARS)
        return f"the MCP server `{self.label}` failed {what}: {said}"


@asynccontextmanager
async def open_session(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    limits: McpLimits | None = None,
    errlog: TextIO | None = None,
) -> AsyncIterator[BoundedSession]:
    """Start the server, complete the handshake within the connect timeout, yield the session;
    on the way out (normal, error, timeout or cancellation) the server is stopped."""
    limits = limits if limits is not None else McpLimits()
    if not command:
        raise ValueError("no server command given (put it after `--`)")
    parameters = StdioServerParameters(
        command=command[0], args=list(command[1:]), env=dict(env) if env else None, cwd=cwd
    )
    label = server_label(command)
    transport = bounded_stdio(
        parameters, label=label, max_message_bytes=limits.max_message_bytes, errlog=errlog
    )
    async with _unwrapped(), transport as (read, write, state):
        session = BoundedSession(state, limits, read_stream=read, write_stream=write)
        async with session:
            await session.initialize()
            yield session


@asynccontextmanager
async def _unwrapped() -> AsyncIterator[None]:
    """Raise the one error that task groups (the SDK's, the transport's) wrapped in groups."""
    try:
        yield
    except BaseExceptionGroup as group:
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if isinstance(inner, Exception) and not isinstance(inner, BaseExceptionGroup):
            raise inner from None
        raise
