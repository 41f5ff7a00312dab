"""`visiongate proxy --listen HOST:PORT`: the proxy as a gateway for teams over Streamable HTTP.

    visiongate proxy --listen 127.0.0.1:8080 --provider anthropic --model claude-sonnet-4-5 \\
        -- npx -y some-server
    VG_TOKEN=... visiongate proxy --listen 0.0.0.0:8080 --token-env VG_TOKEN --config a.yaml \\
        --url https://tools.example.com/mcp --forward-header X-Tools-Key

The options are `proxy`'s (`_options` declares them, so `--help` imports
nothing more); this module, imported only to run, checks them and starts `adapters.gateway`.

Exit: 0 after SIGTERM or SIGINT drained it, 2 for bad usage (a non-loopback address without
`--token-env`, a port in use), 3 for a policy that fails to load.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from visiongate.cli._common import UsageError, checked

if TYPE_CHECKING:
    from visiongate.adapters.gateway import GatewayOptions

__all__ = ["gateway_flags_given", "listen_address", "run_gateway"]

_MIN_TOKEN_CHARS: Final = 16
_NOT_FORWARDED: Final = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "accept",
        "connection",
        "transfer-encoding",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "x-visiongate-provider",
        "x-visiongate-model",
    }
)
"""Headers the SDK's transport sets for each request to the server, and the gateway's own."""
_FLAGS: Final = (
    "path",
    "token_env",
    "allow_origin",
    "allow_host",
    "forward_header",
    "max_sessions",
    "idle_timeout",
    "session_concurrency",
    "drain_timeout",
    "replica_id",
    "max_request_bytes",
    "read_timeout",
    "upstream",
    "max_sessions_per_credential",
    "evict_idle_after",
)


def gateway_flags_given(args: argparse.Namespace) -> list[str]:
    """The gateway's options given on a command line without `--listen`."""
    return [
        "--" + name.replace("_", "-")
        for name in _FLAGS
        if getattr(args, name, None) not in (None, [])
    ]


def listen_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT`, `:PORT` or `PORT` (on 127.0.0.1)."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = "", text
    host = host.strip() or "127.0.0.1"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"`--listen {text}`: give HOST:PORT, the port a number up to 65535")
    if ":" in host and not host.startswith("["):
        raise UsageError(f"`--listen {text}`: write an IPv6 address in brackets, `[::1]:8080`")
    return host.strip("[]"), int(port)


def run_gateway(args: argparse.Namespace, command: list[str], headers: dict[str, str]) -> int:
    """Check the gateway's options, load the gate, bind the socket and serve until a signal."""
    import asyncio

    from visiongate.adapters.mcp._sdk import require_client_sdk
    from visiongate.cli._common import check_gate_inputs
    from visiongate.cli._signals import Interrupted, signals_raise

    host, port = listen_address(args.listen)
    token = _token(args, host)
    forwarded = _forwarded(args, token is not None)
    require_client_sdk()
    try:
        from visiongate.adapters.gateway import GatewayMetrics, bind, serve_gateway
    except ImportError as error:
        if error.name in ("prometheus_client", "uvicorn"):
            raise UsageError(
                f"the gateway needs `{error.name}`: install `pip install 'visiongate[gateway]'`"
            ) from None
        raise
    if args.read_timeout is not None:
        _check_head_deadline()
    try:
        with signals_raise():
            check_gate_inputs(args)
            metrics = GatewayMetrics()
            gate, options = checked(
                lambda: _gateway_options(
                    args, command, headers, host, port, token, forwarded, metrics
                )
            )
            try:
                sock = checked(lambda: bind(host, port))
                return asyncio.run(serve_gateway(gate, options, metrics, sock))
            finally:
                gate.close()
    except Interrupted as stopped:
        print(f"visiongate proxy: {stopped} while starting", file=sys.stderr)
        return stopped.exit_code


def _check_head_deadline() -> None:
    """`--read-timeout` needs the uvicorn internals the head deadline hooks into: refused,
    naming what is missing, on a uvicorn without them (see `adapters.gateway._http`)."""
    import uvicorn

    from visiongate.adapters.gateway._http import missing_hooks

    missing = missing_hooks()
    if missing:
        raise UsageError(
            f"`--read-timeout` cannot be kept on uvicorn {uvicorn.__version__}: its h11 "
            f"protocol lacks {', '.join(missing)}; install the uvicorn the `gateway` extra "
            "pins (`pip install 'visiongate[gateway]'`)"
        )


def _token(args: argparse.Namespace, host: str) -> str | None:
    from visiongate.adapters.gateway._security import is_loopback

    if args.token_env is None:
        if not is_loopback(host):
            raise UsageError(
                f"refusing to listen on {host}, which is not loopback, without authentication: "
                "give `--token-env NAME`, NAME an environment variable holding the bearer token "
                "clients send"
            )
        return None
    token = os.environ.get(args.token_env, "").strip()
    if not token:
        raise UsageError(f"`--token-env {args.token_env}`: that environment variable is not set")
    if len(token) < _MIN_TOKEN_CHARS or any(ord(c) < 0x21 or ord(c) > 0x7E for c in token):
        raise UsageError(
            f"`--token-env {args.token_env}`: the token must be at least {_MIN_TOKEN_CHARS} "
            "visible ASCII characters"
        )
    return token


def _forwarded(args: argparse.Namespace, has_token: bool) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip().lower() for name in args.forward_header))
    if names and not args.url:
        raise UsageError("`--forward-header` applies to a `--url` server only")
    for name in names:
        if not name or any(c in name for c in " :\t"):
            raise UsageError(f"`--forward-header {name}`: give a header name, without a value")
        if name in _NOT_FORWARDED:
            raise UsageError(f"`--forward-header {name}`: the gateway sets that header itself")
        if name == "authorization" and has_token:
            raise UsageError(
                "`--forward-header authorization` with `--token-env` would send the gateway's "
                "own token to the server; clients can pass theirs in another header"
            )
    return names


def _gateway_options(
    args: argparse.Namespace,
    command: list[str],
    headers: dict[str, str],
    host: str,
    port: int,
    token: str | None,
    forwarded: tuple[str, ...],
    metrics: Any,
) -> tuple[Any, GatewayOptions]:
    from visiongate.adapters.gateway import GatewayOptions
    from visiongate.adapters.gateway import _options as defaults
    from visiongate.cli.proxy import proxy_options

    gate, proxy = proxy_options(args, command, headers, extra_trace=metrics.record)
    if args.max_result_bytes is None and args.client is None:  # the SDK client's 1 MiB event
        target = replace(proxy.target, max_result_bytes=defaults.DEFAULT_MAX_RESULT_BYTES)
        proxy = replace(proxy, target=target)
    options = GatewayOptions(
        proxy=proxy,
        host=host,
        port=port,
        path=args.path or defaults.DEFAULT_PATH,
        token=token,
        allow_origins=tuple(args.allow_origin),
        allow_hosts=tuple(name.lower() for name in args.allow_host),
        forward_headers=forwarded,
        max_sessions=args.max_sessions or defaults.DEFAULT_MAX_SESSIONS,
        idle_timeout=args.idle_timeout or defaults.DEFAULT_IDLE_TIMEOUT_S,
        session_concurrency=args.session_concurrency or defaults.DEFAULT_SESSION_CONCURRENCY,
        drain_timeout=args.drain_timeout or defaults.DEFAULT_DRAIN_S,
        max_request_bytes=args.max_request_bytes or defaults.DEFAULT_MAX_REQUEST_BYTES,
        read_timeout=args.read_timeout or defaults.DEFAULT_READ_TIMEOUT_S,
        replica=args.replica_id or os.environ.get("VISIONGATE_REPLICA_ID") or None,
        upstream=args.upstream or "per-session",
        max_sessions_per_credential=args.max_sessions_per_credential,
        evict_idle_after=args.evict_idle_after or defaults.DEFAULT_EVICT_IDLE_AFTER_S,
    )
    return gate, options
