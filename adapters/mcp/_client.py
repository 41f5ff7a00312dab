"""A real MCP client: start a server over stdio with the official SDK, call one tool, route it.

The server gets the SDK's default environment (HOME, PATH, USER, ...) plus `env`: API keys
and other secrets of this process are not passed on unless named. Every step is bounded
(`_session`): `connect_timeout` for starting and the handshake, `timeout` for each request,
`max_message_bytes` for each message; the server is stopped however the call ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._routed import RoutedResult
from .._router import Router
from ._sdk import require_client_sdk

require_client_sdk()  # before the SDK imports below, so a missing SDK is one clear line

from mcp.types import CallToolResult  # noqa: E402

from ._session import McpLimits, open_session  # noqa: E402

__all__ = ["call_and_route", "call_mcp_tool"]


async def call_mcp_tool(
    command: Sequence[str],
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float | None = None,
    connect_timeout: float | None = None,
    max_message_bytes: int | None = None,
) -> CallToolResult:
    """Start the server, initialize, call `tool` once, and stop the server.

    `timeout` (default 120 s) bounds each request and, unless `connect_timeout` (default 30 s)
    is given, the handshake; `max_message_bytes` (default 32 MiB) each message. Raises
    `OSError` when the server cannot start, `TimeoutError` (an `OSError`) when it does not
    answer in time, `ConnectionError` when it exits, `ValueError` for a malformed or oversized
    answer and `mcp.MCPError` for a JSON-RPC error; every message is sanitized.
    """
    limits = McpLimits.of(timeout, connect_timeout, max_message_bytes)
    async with open_session(command, env=env, cwd=cwd, limits=limits) as session:
        return await session.call_tool(tool, dict(arguments) if arguments is not None else None)


async def call_and_route(
    router: Router,
    command: Sequence[str],
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    provider: str,
    model: str,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    connect_timeout: float | None = None,
    max_message_bytes: int | None = None,
) -> RoutedResult:
    """`call_mcp_tool`, then route the result through `router` (image work runs off the loop)."""
    result = await call_mcp_tool(
        command,
        tool,
        arguments,
        env=env,
        timeout=timeout,
        connect_timeout=connect_timeout,
        max_message_bytes=max_message_bytes,
    )
    return await router.mcp(result, provider=provider, model=model, tool_name=tool)
