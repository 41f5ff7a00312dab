"""The gateway's state: its open sessions, and nothing else (so N replicas behind a load balancer
need nothing shared). Sessions are admitted here (`--max-sessions`,
`--max-sessions-per-credential`, the session idle longest evicted to make room; not while
draining), found here by id and by the credentials that opened them, and drained here on
SIGTERM.

Session ids are 128 random bits in hex, after `<replica>.` when the replica has a name
(`--replica-id`): a load balancer routes a session's requests to the replica its id names
(see the README's "Run it for a team"), and the id says nothing else.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO, cast

import anyio
import anyio.abc

from visiongate.engine import Gate

from .._cache import default_cache_dir
from ..proxy.relay import log
from ._leftovers import sweep
from ._metrics import GatewayMetrics
from ._options import GatewayOptions
from ._security import Checks
from ._session import Labelled, Session
from ._shared import SharedServer

if TYPE_CHECKING:
    from ..vision import VisionBackend

__all__ = ["Gateway"]

_STOP_WAIT_S: Final = 10.0
"""How long stopped sessions get to stop their servers before the gateway gives up on them."""


class Gateway:
    """The sessions of one gateway process."""

    def __init__(self, gate: Gate, options: GatewayOptions, metrics: GatewayMetrics) -> None:
        self.gate = gate
        self.options = options
        self.metrics = metrics
        self.checks = Checks.build(
            options.host, options.token, options.allow_origins, options.allow_hosts
        )
        root = options.proxy.cache_dir
        self.cache_root = Path(root) if root is not None else default_cache_dir()
        self.draining = False
        self.ready = False
        self._sessions: dict[str, Session] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._vision = _VisionPool(gate)
        self.notices = NoticeBoard()
        """The session targets whose warnings were said (`_app`), once each."""
        target = options.proxy.target
        self.notices.first_time(target.provider, target.model)  # said at start
        self.shared: SharedServer | None = None
        if options.upstream == "shared":
            self.shared = SharedServer(
                options.proxy.command,
                max_message_bytes=options.proxy.max_message_bytes,
                start=self._start_task,
                errlog=cast(TextIO, Labelled("shared server")),
            )

    # -- admission ------------------------------------------------------------------------------

    def admit(self, owner: bytes) -> str | None:
        """Make room for a new session opened with the credentials `owner` digests: None when
        it may open (the session of the table, or of those credentials, idle longest ended for
        it if need be), else why not: `draining`, `credential_cap` or `max_sessions`."""
        if self.draining or not self.ready:
            return "draining"
        cap = self.options.max_sessions_per_credential
        if cap is not None:
            theirs = [s for s in self.open_sessions() if hmac.compare_digest(s.owner, owner)]
            if len(theirs) >= cap and not self._evict(theirs, "credential_cap"):
                return "credential_cap"
        if len(self) >= self.options.max_sessions and not self._evict(
            list(self.open_sessions()), "full"
        ):
            return "max_sessions"
        return None

    def _evict(self, sessions: list[Session], why: str) -> bool:
        """End the session of `sessions` idle longest (nothing in flight, no GET stream
        open, for `--evict-idle-after` at least: a session just opened is about to be used,
        and a flood of new ones cannot push out those in use); False when none is. Its
        client's next request gets 404, and it initializes again, as the specification asks
        of a session that ended."""
        now = time.monotonic()
        after = self.options.evict_idle_after
        idle = [s for s in sessions if s.idle and now - s.last_used >= after]
        if not idle:
            return False
        evicted = min(idle, key=lambda session: session.last_used)
        evicted.stop("evicted")
        self.metrics.sessions_evicted.labels(why).inc()
        since = time.monotonic() - evicted.last_used
        table = "its credentials' cap" if why == "credential_cap" else "the table"
        log(f"{evicted.label} evicted after {since:.0f}s idle: {table} was full for a new one")
        return True

    def open_sessions(self) -> list[Session]:
        return [session for session in self._sessions.values() if not session.ending]

    def mint_id(self) -> str:
        random = secrets.token_hex(16)
        return f"{self.options.replica}.{random}" if self.options.replica else random

    async def open(self, session: Session) -> None:
        """Register `session` and start it; it can take its opening request on return."""
        assert self._group is not None
        self._sessions[session.id] = session
        self.metrics.sessions.set(len(self._sessions))
        self.metrics.sessions_started.inc()
        vision = self._vision.for_target(session.target.provider, session.target.model)
        await self._group.start(
            session.run, self.gate, self.metrics, vision, self._forget, self.shared
        )

    def find(self, session_id: str, owner: bytes) -> Session | None:
        """The session `session_id` names, if the request presents the credentials it was
        opened with; else None, exactly as for an id that was never issued."""
        session = self._sessions.get(session_id)
        if session is None or session.ending or not hmac.compare_digest(session.owner, owner):
            return None
        return session

    def _forget(self, session: Session) -> None:
        if self._sessions.get(session.id) is session:
            del self._sessions[session.id]
        self.metrics.sessions.set(len(self._sessions))

    def __len__(self) -> int:
        """Sessions open for their clients (not those whose servers are still stopping)."""
        return sum(not session.ending for session in self._sessions.values())

    def spawn(self, work: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        assert self._group is not None
        self._group.start_soon(work)

    async def _start_task(self, work: Callable[..., Coroutine[Any, Any, None]]) -> None:
        assert self._group is not None
        await self._group.start(work)

    # -- running and draining -------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Sessions can be opened inside; on the way out every one is stopped, its server too."""
        removed = await anyio.to_thread.run_sync(sweep, self.cache_root)
        if removed:
            plural = "y" if removed == 1 else "ies"
            log(f"removed {removed} session director{plural} a killed gateway left behind")
        async with anyio.create_task_group() as group:
            self._group = group
            self.ready = True
            try:
                yield
            finally:
                self.ready = False
                with anyio.CancelScope(shield=True):
                    await self.stop_all("stopped")
                    if self.shared is not None:
                        await self.shared.stop()
                group.cancel_scope.cancel()

    def in_flight(self) -> int:
        return sum(session.in_flight for session in self._sessions.values())

    async def drain(self, deadline_s: float) -> int:
        """Refuse new sessions and requests, let the requests in flight finish (at most
        `deadline_s`), then stop every session. Returns the requests still in flight then."""
        self.draining = True
        log(
            f"draining: {len(self._sessions)} session(s), {self.in_flight()} request(s) in flight, "
            f"at most {deadline_s:g}s"
        )
        deadline = time.monotonic() + deadline_s
        while self.in_flight() and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        left = self.in_flight()
        await self.stop_all("drained")
        return left

    async def stop_all(self, reason: str) -> None:
        sessions = list(self._sessions.values())
        for session in sessions:
            session.stop(reason)
        with anyio.move_on_after(_STOP_WAIT_S):
            for session in sessions:
                await session.ended.wait()


class _VisionPool:
    """One auxiliary vision backend per main model, shared by every session that routes for it
    (`vision.BackendPool`): a session whose config is unusable gets None, and its router
    builds its own and says why when it needs one."""

    def __init__(self, gate: Gate) -> None:
        from ..vision._cache import BackendPool
        from ..vision._config import pooled_backend

        self._gate = gate
        self._pool = BackendPool(pooled_backend)

    def for_target(self, provider: str, model: str) -> Callable[[], VisionBackend | None]:
        def backend() -> VisionBackend | None:
            from ..vision import VisionUnavailable

            try:
                return self._pool.get(self._gate.resolver.config.raw, provider, model)
            except VisionUnavailable:
                return None

        return backend


MAX_TARGETS: Final = 1024
"""Session targets remembered as already said (they come from clients' headers: bounded)."""


class NoticeBoard:
    """Which targets were said already, so each is said once per process."""

    def __init__(self) -> None:
        self._said: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def first_time(self, provider: str, model: str) -> bool:
        """True the first time a target is seen (and while the board is not full)."""
        key = (provider, model)
        with self._lock:
            if key in self._said or len(self._said) >= MAX_TARGETS:
                return False
            self._said.add(key)
            return True
