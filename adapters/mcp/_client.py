"""A real MCP client: start a server over stdio with the official SDK, call one tool, route it.

The server gets the SDK's default environment (HOME, PATH, USER, ...) plus `env`: API keys
and other secrets of this process are not passed on unless named.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from .._routed import RoutedResult
from .._router import Router

__all__ = ["call_and_route", "call_mcp_tool"]


def server_parameters(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> StdioServerParameters:
    """Stdio parameters for `command` (the program, then its arguments)."""
    if not command:
        raise ValueError("no server command given (put it after `--`)")
    return StdioServerParameters(
        command=command[0], args=list(command[1:]), env=dict(env) if env else None, cwd=cwd
    )


async def call_mcp_tool(
    command: Sequence[str],
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> CallToolResult:
    """Start the server, initialize, call `tool` once, and stop the server.

    Raises `OSError` when the server cannot start and `mcp.MCPError` on a protocol error.
    """
    parameters = server_parameters(command, env=env, cwd=cwd)
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
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
) -> RoutedResult:
    """`call_mcp_tool`, then route the result through `router` (image work runs off the loop)."""
    result = await call_mcp_tool(command, tool, arguments, env=env)
    return await router.mcp(result, provider=provider, model=model, tool_name=tool)
