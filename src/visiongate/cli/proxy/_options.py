"""The options `visiongate proxy` declares (`add_options`), with the checks of their values:
written out here, beside the command, so that `proxy --help` imports nothing heavy."""

from __future__ import annotations

import argparse

from visiongate.cli._common import add_gate_arguments, positive_seconds

__all__ = ["CLIENTS", "add_options"]

# Written out as in `adapters.proxy._config`, so `proxy --help` imports nothing heavy.
CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode", "codex", "goose", "json")
_MIN_RESULT_BYTES = 65_536


def add_options(parser: argparse.ArgumentParser) -> None:
    """Every option of `visiongate proxy`, the gateway's in their own group."""
    parser.add_argument("--provider", help="main model's provider, e.g. `anthropic`")
    parser.add_argument("--model", help="main model, e.g. `claude-sonnet-4-5`")
    add_gate_arguments(parser)
    parser.add_argument("--trace", metavar="FILE", help="append one decision record per call")
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=120.0,
        metavar="SECONDS",
        help="longest wait for each request to the server (default 120)",
    )
    limits = parser.add_mutually_exclusive_group()
    limits.add_argument(
        "--max-result-bytes",
        type=_byte_count,
        metavar="BYTES",
        help="largest message sent to the client (default 10000000, the SDKs' stdio limit; "
        "with --listen 1032192, under the SDK client's 1 MiB per SSE event)",
    )
    limits.add_argument(
        "--client", choices=CLIENTS, help="the client's known limit (claude-desktop: 1000000)"
    )
    parser.add_argument(
        "--max-message-bytes",
        type=_byte_count,
        metavar="BYTES",
        help="largest message read from either side (default 67108864)",
    )
    parser.add_argument("--cache-dir", help="image cache (default: $VISIONGATE_CACHE_DIR)")
    parser.add_argument(
        "--no-image-tool",
        action="store_true",
        help="do not offer the proxy's own tool `visiongate_view_image` for images kept out",
    )
    parser.add_argument("--url", help="a Streamable HTTP server instead of a command")
    parser.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="HTTP header (--url)"
    )
    parser.add_argument(
        "--print-config", choices=CLIENTS, metavar="CLIENT", help=f"print the entry for {CLIENTS}"
    )
    parser.add_argument("--name", help="the server's name in the printed entry")
    _add_gateway_arguments(parser)
    parser.add_argument(
        "server", nargs=argparse.REMAINDER, metavar="-- SERVER COMMAND ...", help="after `--`"
    )


def _add_gateway_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("gateway (Streamable HTTP for many clients: --listen)")
    group.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="serve MCP over Streamable HTTP on HOST:PORT, not stdio (HOST default 127.0.0.1)",
    )
    group.add_argument("--path", metavar="PATH", help="the MCP endpoint's path (default /mcp)")
    group.add_argument(
        "--token-env",
        metavar="NAME",
        help="require `Authorization: Bearer <token>`, the token in environment variable NAME",
    )
    group.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an Origin browsers may call from (`https://app.example`, `http://localhost:*`)",
    )
    group.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a Host header to answer besides loopback names (`gw.example:8080`, `gw.example:*`)",
    )
    group.add_argument(
        "--forward-header",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this client header to the --url server (repeat; nothing else is passed)",
    )
    group.add_argument(
        "--upstream",
        choices=("per-session", "shared"),
        help="a server process per session (default), or one shared by every session",
    )
    group.add_argument(
        "--max-sessions",
        type=_positive,
        metavar="N",
        help="default 100; when full, the session idle longest is ended for a new one",
    )
    group.add_argument(
        "--evict-idle-after",
        type=positive_seconds,
        metavar="SECONDS",
        help="how long a session must idle before a new one may take its place (default 60)",
    )
    group.add_argument(
        "--max-sessions-per-credential",
        type=_positive,
        metavar="N",
        help="sessions open with one token and forwarded headers (default: no cap of its own)",
    )
    group.add_argument(
        "--idle-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="end a session with nothing in flight and no GET stream for this long (default 1800)",
    )
    group.add_argument(
        "--session-concurrency",
        type=_positive,
        metavar="N",
        help="requests in flight per session (default 16)",
    )
    group.add_argument(
        "--drain-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="on SIGTERM, how long calls in flight may finish (default 30)",
    )
    group.add_argument(
        "--replica-id",
        metavar="NAME",
        help="this replica's name, prefixed to its session ids (default $VISIONGATE_REPLICA_ID)",
    )
    group.add_argument(
        "--max-request-bytes",
        type=_positive,
        metavar="BYTES",
        help="largest request body from a client (default 4194304)",
    )
    group.add_argument(
        "--read-timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help="a request's head, then its body, must arrive within this long (default 30)",
    )


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"`{text}` must be at least 1")
    return value


def _byte_count(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of bytes") from None
    if value < _MIN_RESULT_BYTES:
        raise argparse.ArgumentTypeError(f"`{text}` must be at least {_MIN_RESULT_BYTES}")
    return value
