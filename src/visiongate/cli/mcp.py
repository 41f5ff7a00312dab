"""`visiongate mcp call`: start an MCP server over stdio, call one tool, route the result.

    visiongate mcp call --provider anthropic --model claude-sonnet-4-5 --tool screenshot \\
        -- python -m visiongate.adapters.mcp.example_server

Output as for `visiongate route`. The server gets the MCP SDK's default environment (HOME,
PATH, USER, ...), not this process's secrets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from mcp import MCPError

from visiongate.adapters._routed import RoutedResult
from visiongate.adapters._router import Router
from visiongate.adapters.mcp._client import call_and_route
from visiongate.cli import EXIT_USAGE
from visiongate.cli._common import add_gate_arguments, check_gate_inputs, guarded
from visiongate.cli.route import add_output_arguments, add_target_arguments, build_router, emit

HELP = "call a tool on an MCP server over stdio and route its result"


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    call = commands.add_parser(
        "call",
        help="call one tool and route the result",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("--tool", required=True, help="the tool to call")
    call.add_argument("--args", default="{}", metavar="JSON", help="tool arguments, a JSON object")
    add_target_arguments(call)
    add_gate_arguments(call)
    add_output_arguments(call)
    call.add_argument(
        "server",
        nargs=argparse.REMAINDER,
        metavar="-- SERVER COMMAND ...",
        help="the server's command line, after `--`",
    )


def run(args: argparse.Namespace) -> int:
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        print("visiongate mcp call: error: give the server command after `--`", file=sys.stderr)
        return EXIT_USAGE
    arguments = parse_arguments(args.args)
    if arguments is None:
        print(
            f"visiongate mcp call: error: --args must be a JSON object, not `{args.args}`",
            file=sys.stderr,
        )
        return EXIT_USAGE
    check_gate_inputs(args)
    outcome = guarded(lambda: _call(args, command, arguments))
    if isinstance(outcome, int):
        return outcome
    router, routed = outcome
    return guarded(lambda: emit(router, routed, args))


def parse_arguments(text: str) -> dict[str, Any] | None:
    """The tool arguments, or None when `text` is not a JSON object."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _call(
    args: argparse.Namespace, command: list[str], arguments: dict[str, Any]
) -> tuple[Router, RoutedResult]:
    router = build_router(args)
    try:
        routed = asyncio.run(
            call_and_route(
                router, command, args.tool, arguments, provider=args.provider, model=args.model
            )
        )
    except (MCPError, ExceptionGroup) as error:
        # A protocol error, or a server that died (the SDK's task group wraps that one), is
        # bad input for this command (exit 2); anything else is a bug and keeps its traceback.
        found = _mcp_error(error)
        if found is None:
            raise
        raise ValueError(f"the MCP server failed: {found.error.message}") from error
    return router, routed


def _mcp_error(error: BaseException) -> MCPError | None:
    """The first `MCPError` in `error` or, for an exception group, in its members."""
    if isinstance(error, MCPError):
        return error
    if isinstance(error, BaseExceptionGroup):
        return next(filter(None, map(_mcp_error, error.exceptions)), None)
    return None
