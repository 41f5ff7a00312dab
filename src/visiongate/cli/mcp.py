"""`visiongate mcp call`: start an MCP server over stdio, call one tool, route the result.

    visiongate mcp call --provider anthropic --model claude-sonnet-4-5 --tool screenshot \\
        -- python -m visiongate.adapters.mcp.example_server

Output as for `visiongate route`; a tool that answers with `isError` exits 4 after its routed
result is printed. The server gets the MCP SDK's default environment (HOME, PATH, USER, ...),
not this process's secrets. Every step is bounded: `--timeout` for each request (and the
handshake, unless `--connect-timeout` is given), `--max-message-bytes` for each message. A
server that does not answer, answers wrongly or is interrupted (Ctrl-C, SIGTERM) is stopped,
SIGTERM then SIGKILL to its process group: it is never left running.
"""

from __future__ import annotations

import argparse
import sys

from visiongate.cli._common import (
    UsageError,
    add_gate_arguments,
    check_gate_inputs,
    checked,
    positive_seconds,
    reason,
)
from visiongate.cli._signals import Interrupted, run_until_signal, signals_raise
from visiongate.cli.route import add_output_arguments, add_target_arguments, build_router, emit

# Not `typing.TYPE_CHECKING`, and `json` imported where it is used: `mcp --help` (issue 37).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from visiongate.adapters._routed import RoutedResult
    from visiongate.adapters._router import Router

HELP = "call a tool on an MCP server over stdio and route its result"

# Copies of the session's defaults, for the help text: `mcp --help` and `demo --help` import
# no SDK (issue 37). tests/test_cli_imports.py checks they match the session's own.
DEFAULT_CONNECT_TIMEOUT_S: Final = 30.0
DEFAULT_REQUEST_TIMEOUT_S: Final = 120.0
DEFAULT_MAX_MESSAGE_BYTES: Final = 32 * 1024 * 1024


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    call = commands.add_parser(
        "call",
        allow_abbrev=False,
        help="call one tool and route the result",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    call.add_argument("--tool", required=True, help="the tool to call")
    call.add_argument("--args", default="{}", metavar="JSON", help="tool arguments, a JSON object")
    add_limit_arguments(call)
    add_target_arguments(call)
    add_gate_arguments(call)
    add_output_arguments(call)
    call.add_argument(
        "server",
        nargs=argparse.REMAINDER,
        metavar="-- SERVER COMMAND ...",
        help="the server's command line, after `--`",
    )


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """`--timeout`, `--connect-timeout` and `--max-message-bytes`."""
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help=f"longest wait for each request to the server, and for the handshake unless "
        f"--connect-timeout is given (default {DEFAULT_REQUEST_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--connect-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help=f"longest wait for the server to start and answer `initialize` "
        f"(default {DEFAULT_CONNECT_TIMEOUT_S:g}, or --timeout)",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        metavar="BYTES",
        help=f"largest message accepted from the server (default {DEFAULT_MAX_MESSAGE_BYTES})",
    )


def run(args: argparse.Namespace) -> int:
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        raise UsageError("give the server command after `--`")
    arguments = parse_arguments(args.args)
    if arguments is None:
        raise UsageError(f"--args must be a JSON object, not `{args.args}`")
    check_gate_inputs(args)
    try:
        with signals_raise():
            router, routed = checked(lambda: _call(args, command, arguments))
    except Interrupted as stopped:
        print(f"visiongate mcp call: {stopped}; the server was stopped", file=sys.stderr)
        return stopped.exit_code
    return checked(lambda: emit(router, routed, args))


def parse_arguments(text: str) -> dict[str, Any] | None:
    """The tool arguments, or None when `text` is not a JSON object."""
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _call(
    args: argparse.Namespace, command: list[str], arguments: dict[str, Any]
) -> tuple[Router, RoutedResult]:
    from visiongate.adapters.mcp._client import call_and_route
    from visiongate.adapters.mcp._session import ServerError, server_label

    router = build_router(args)
    try:
        routed = run_until_signal(
            lambda: call_and_route(
                router,
                command,
                args.tool,
                arguments,
                provider=args.provider,
                model=args.model,
                timeout=args.timeout,
                connect_timeout=args.connect_timeout,
                max_message_bytes=args.max_message_bytes,
            )
        )
    except ServerError as error:
        # A JSON-RPC error is the server's answer to bad input (exit 2); its words are
        # already cleaned. Timeouts, closed connections and malformed answers are OSError or
        # ValueError and reach `checked` as they are.
        raise ValueError(str(error)) from None
    except OSError as error:
        if error.filename is None or isinstance(error, ConnectionError):
            raise
        # The program could not be started (not found, not executable): name it, as the
        # proxy does, rather than Python's `[Errno 2] ... 'nosuchserver'`.
        raise UsageError(
            f"cannot start the MCP server `{server_label(command)}`: {reason(error)}"
        ) from None
    return router, routed
