"""One client's session behind the gateway: the SDK's transport, the proxy's relay, its server.

A session begins with the client's `initialize`: the gateway mints its id, starts its server (or,
with `--upstream shared`, attaches to the one of every session: `_shared`; else a
process of its own for a stdio command, started in a thread so the other sessions' traffic
never waits on a fork; or a session of its own with a `--url` server, with the headers named
by `--forward-header`), and runs `proxy._serve.relay_session` between the transport and the
server: the same relay, routing, cleaning, size caps and records as `visiongate proxy` over
stdio, every record naming this session and the client's `clientInfo`.

Each session has its own router (its own image cache directory, removed when it ends, or by
the next gateway to start if this one is killed: `_leftovers`; its own `visiongate_view_image`
memory, so a `MEDIA:` path of another session is refused; its own screen memory) and shares
only the gate, the metrics and the auxiliary vision backend.

It ends when the client deletes it, when it idles out (no request in flight and no GET stream
open for `--idle-timeout`: the transport's own countdown), when its server goes away (the
requests in flight are answered with the reason, and the client's next request gets 404, so it
initializes again and gets a new server), or when the gateway stops it (a drain). Its server is
stopped in every case (stdin closed, SIGTERM, SIGKILL to its group), and the watchdog of
`mcp._child` stops it if the gateway itself is killed.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO, cast

import anyio
import anyio.abc

from visiongate.engine import Gate

from ..mcp._child import Child, SpawnError, start_server
from ..proxy._serve import ProxyOptions, relay_session
from ..proxy.relay import SESSION_LABEL, UPSTREAM_GONE, log
from ..sanitize._line import untrusted_line
from ._client import HttpDownstream
from ._leftovers import claim, release
from ._metrics import GatewayMetrics
from ._options import SessionTarget

if TYPE_CHECKING:
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    from ..vision import VisionBackend
    from ._shared import SharedServer

__all__ = ["Labelled", "Session", "session_directory"]

_CLIENT_FIELD_CHARS: Final = 100


def session_directory(root: Path, session_id: str) -> Path:
    """Where a session's images go: named by a digest of its id, never by the id itself."""
    return root / "sessions" / hashlib.sha256(session_id.encode()).hexdigest()[:32]


class Session:
    """One client session: what it routes for, whose it is, and its relay while it runs."""

    def __init__(
        self,
        session_id: str,
        transport: StreamableHTTPServerTransport,
        *,
        owner: bytes,
        target: SessionTarget,
        client_info: Any,
        options: ProxyOptions,
        concurrency: int,
    ) -> None:
        self.id = session_id
        self.transport = transport
        self.owner = owner
        self.target = target
        self.options = options
        self.concurrency = concurrency
        self.in_flight = 0
        """JSON-RPC requests of this session being served now (POSTs awaiting their answer)."""
        self.last_used = time.monotonic()
        """When a request of the session last began or ended (for eviction, least recent)."""
        self.downstream: HttpDownstream | None = None
        self._claim: int | None = None
        """The held lock on the cache directory's `.owner` (see `_leftovers`)."""
        self.client = _client_fields(client_info)
        self.record: Mapping[str, Any] = {
            "id": session_id,
            "client": self.client,
            "target_from": target.source,
        }
        self.ended = anyio.Event()
        self._stop = anyio.CancelScope()
        self._stop_reason = "drained"
        self._relay_done = False

    @property
    def label(self) -> str:
        return f"session {self.id[-12:]}"

    @property
    def cache_dir(self) -> Path:
        assert self.options.cache_dir is not None
        return Path(self.options.cache_dir)

    @property
    def ending(self) -> bool:
        """Whether the session is over for its client (stopped, idled out, its relay done),
        though its server may still be stopping: it takes no request and holds no slot."""
        idle = self.transport.idle_scope
        return (
            self._relay_done
            or self._stop.cancel_called
            or (idle is not None and idle.cancel_called)
            or self.transport.is_terminated
        )

    @property
    def idle(self) -> bool:
        """Nothing in flight and no GET stream open: ending it interrupts nothing."""
        listening = self.downstream is not None and self.downstream.has_stream
        return self.in_flight == 0 and not listening

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def _relay_ended(self) -> None:
        self._relay_done = True

    def stop(self, reason: str) -> None:
        """End the session from outside (the gateway draining or stopping)."""
        self._stop_reason = reason
        self._stop.cancel()

    async def run(
        self,
        gate: Gate,
        metrics: GatewayMetrics,
        vision: Callable[[], VisionBackend | None],
        forget: Callable[[Session], None],
        shared: SharedServer | None = None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Serve the session until it ends (see the module docstring); ready once the
        transport can take the opening request."""
        SESSION_LABEL.set(self.label)
        reason = "failed"
        try:
            async with self.transport.connect() as (read, write):
                self.downstream = HttpDownstream(read, write, count=metrics.count_bytes)
                task_status.started()
                try:
                    reason = await self._served(gate, metrics, vision, shared)
                finally:
                    with anyio.CancelScope(shield=True):
                        forget(self)  # its id answers 404 from now on
                        await self.transport.terminate()  # before its streams close
        except Exception as error:  # a session's failure is its own, never the gateway's
            log(f"the session failed: {untrusted_line(f'{type(error).__name__}: {error}', 300)}")
        finally:
            with anyio.CancelScope(shield=True):
                await self._end(reason, metrics)

    async def _served(
        self,
        gate: Gate,
        metrics: GatewayMetrics,
        vision: Callable[[], VisionBackend | None],
        shared: SharedServer | None,
    ) -> str:
        """Relay until the session ends; why it ended."""
        idle = self.transport.idle_scope or anyio.CancelScope()
        reason = "failed"
        with idle, self._stop:
            code = await self._relay(gate, metrics, vision, shared)
            reason = "upstream_gone" if code == UPSTREAM_GONE else "deleted"
        if idle.cancelled_caught:
            return "idle"
        if self._stop.cancelled_caught:
            return self._stop_reason
        return reason

    async def _relay(
        self,
        gate: Gate,
        metrics: GatewayMetrics,
        vision: Callable[[], VisionBackend | None],
        shared: SharedServer | None,
    ) -> int:
        assert self.downstream is not None
        try:
            self._claim = await anyio.to_thread.run_sync(claim, self.cache_dir)
        except OSError as error:  # its images meet the same error, each with its own note
            log(f"no owner lock on the image directory: {untrusted_line(str(error), 200)}")
        started: Any = None
        if self.options.command and shared is None:
            with anyio.CancelScope(shield=True):  # a server started is always handed on
                started = await anyio.to_thread.run_sync(start_server, self.options.command)
            if isinstance(started, SpawnError):
                metrics.upstream_failures.labels("start").inc()
        try:
            return await relay_session(
                gate,
                self.options,
                self.downstream,
                started=started,
                session=self.record,
                vision=vision,
                errlog=cast(TextIO, Labelled(self.label)),
                relay_ended=self._relay_ended,
                upstream_context=shared.connected(self.label) if shared is not None else None,
            )
        finally:
            if isinstance(started, Child) and (
                started.returncode is None or started.watchdog is not None
            ):
                started.kill()  # the relay did not stop it (or its watchdog): stop both now

    async def _end(self, reason: str, metrics: GatewayMetrics) -> None:
        """Count and clean up; whatever fails here is logged, never the gateway's failure."""
        try:
            metrics.sessions_ended.labels(reason).inc()
            if reason == "upstream_gone":
                metrics.upstream_failures.labels("session_lost").inc()
            await anyio.to_thread.run_sync(_remove, self.cache_dir)
        except Exception as error:
            log(f"could not clean up: {untrusted_line(f'{type(error).__name__}: {error}', 200)}")
        finally:
            if self._claim is not None:
                release(self._claim)  # after the removal: a sweep never sees it half gone
            log(f"ended ({reason})")
            self.ended.set()


def with_session(
    options: ProxyOptions,
    cache_root: Path,
    session_id: str,
    headers: Mapping[str, str],
    target: SessionTarget,
) -> ProxyOptions:
    """The relay's options for one session: its model, its cache directory, its headers."""
    directory = session_directory(cache_root, session_id)
    merged = {**options.headers, **headers}
    return replace(target.applied(options), cache_dir=str(directory), headers=merged)


def _client_fields(client_info: Any) -> dict[str, str]:
    """`clientInfo`'s name and version, cleaned to one short line each (the client's words)."""
    fields: dict[str, str] = {}
    if isinstance(client_info, Mapping):
        for key in ("name", "version"):
            value = client_info.get(key)
            if isinstance(value, str):
                fields[key] = untrusted_line(value, _CLIENT_FIELD_CHARS)
    return fields


def _remove(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)


class Labelled(io.TextIOBase):
    """The server's standard error, each line prefixed with its session (the proxy's relay
    of it cleans and clips every line before it gets here)."""

    def __init__(self, label: str) -> None:
        self._prefix = f"visiongate proxy [{label}] server: "
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            if line:
                sys.stderr.write(f"{self._prefix}{line}\n")
        return len(text)

    def flush(self) -> None:
        sys.stderr.flush()
