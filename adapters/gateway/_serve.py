"""Running the gateway: uvicorn serving `GatewayApp` on a socket bound here, until a signal.

The socket is bound before anything is served, so a port in use is a clear error and `--listen
127.0.0.1:0` works (the port chosen is in the `listening on` line on standard error). SIGTERM
or SIGINT drains: new sessions and new requests are refused (503 with `Retry-After`, and
`/readyz` answers 503, so a load balancer sends them elsewhere) while the requests in flight
finish, for at most `--drain-timeout`; then every session is stopped (its requests still in
flight answered with an error, its server stopped) and the process exits 0. A second signal
during the drain stops at once.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

import anyio
import uvicorn

from visiongate.engine import Gate

from ..mcp._child import Child
from ..proxy.relay import log
from ._app import GatewayApp
from ._gateway import Gateway
from ._http import head_deadlined, missing_hooks
from ._metrics import GatewayMetrics
from ._options import GatewayOptions

__all__ = ["bind", "serve_gateway"]

_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
_SHUTDOWN_S: Final = 5.0
"""How long uvicorn waits for connections still open once every session was stopped."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (an IPv6 address too); `OSError` saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that name it, and without
    # it each small SSE write waits out the client's delayed ACK (40 ms a call).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(1024)
    except OSError as error:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.set_inheritable(False)
    return sock


async def serve_gateway(
    gate: Gate,
    options: GatewayOptions,
    metrics: GatewayMetrics,
    sock: socket.socket,
    *,
    spare: Child | None = None,
) -> int:
    """Serve until SIGTERM or SIGINT, drain, and return 0 (see the module docstring).
    `metrics.record` should be one of the gate's trace sinks, so calls are counted; `spare`
    is a server started already, for the first session (or as the shared one)."""
    gateway = Gateway(gate, options, metrics, spare=spare)
    missing = missing_hooks()
    if missing:
        log(
            f"warning: uvicorn {uvicorn.__version__} lacks {', '.join(missing)}: request heads "
            "have no deadline (bodies still do); install the uvicorn the `gateway` extra pins"
        )
    late = metrics.refused.labels("slow_head").inc
    config = uvicorn.Config(
        GatewayApp(gateway),
        http="h11" if missing else head_deadlined(options.read_timeout, late),
        lifespan="off",
        ws="none",
        log_level="warning",
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=int(_SHUTDOWN_S),
    )
    server = _Server(config)
    stop, force = anyio.Event(), anyio.CancelScope()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        if stop.is_set():
            force.cancel()  # a second signal: no more waiting
        stop.set()

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    with _signals(on_signal):
        async with gateway.running(), anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            log(
                f"listening on http://{shown}:{port}{options.path} (at most "
                f"{options.max_sessions} sessions; {_upstream(options)})"
            )
            await stop.wait()
            with force:
                left = await gateway.drain(options.drain_timeout)
                if left:
                    log(f"{left} request(s) were still in flight at the drain's deadline")
            await gateway.stop_all("drained")
            server.should_exit = True
    name = signal.Signals(received[0]).name if received else "a signal"
    log(f"stopped by {name} after draining; every server was stopped")
    return 0


def _upstream(options: GatewayOptions) -> str:
    proxy = options.proxy
    if proxy.url is not None:
        return f"one session of {proxy.url} per client session"
    if options.upstream == "shared":
        return "one server process shared by every client session"
    return "one server process per client session"


class _Server(uvicorn.Server):
    """uvicorn's server without its own signal handling: the gateway drains on a signal."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextmanager
def _signals(handler: Callable[[int], None]) -> Iterator[None]:
    """SIGINT and SIGTERM call `handler` on the loop; what was there before is put back."""
    loop = asyncio.get_running_loop()
    saved = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    installed: list[signal.Signals] = []
    for signum in _SIGNALS:
        if saved[signum] is signal.SIG_IGN:
            continue  # started ignored (a background job): left so, as the command line does
        try:
            loop.add_signal_handler(signum, handler, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread; Windows
            continue
        installed.append(signum)
    try:
        yield
    finally:
        for done in installed:
            loop.remove_signal_handler(done)
            previous = saved[done]
            if callable(previous) or previous in (signal.SIG_IGN, signal.SIG_DFL):
                signal.signal(done, previous)
        sys.stderr.flush()
