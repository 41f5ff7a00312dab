"""What the two sides of a relay share (`RelayState`): the requests in flight, their
deadlines, the way to each side, and why the server went away; the log every proxy line goes
to."""

from __future__ import annotations

import asyncio
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ...sanitize._line import untrusted_line
from .._call import Call
from .._downstream import ClientGone, Downstream
from .._jsonrpc import UPSTREAM_CLOSED, IdKey, error_response, id_key
from .._own import OwnRequests
from .._upstream import Upstream, UpstreamClosed

if TYPE_CHECKING:  # the tool-call modules load after the first answer (see `.._serve`)
    from anyio.abc import TaskGroup

    from visiongate.engine import Gate, PolicyCheck

    from .._calls import CallRouter

UPSTREAM_GONE: Final = 2
"""Exit status when the server exited or closed its output (as `mcp call` reports it)."""
ROUTED: Final = frozenset({"tools/call", "tasks/result"})
UNREADABLE: Final = (ValueError, TypeError, RecursionError)
"""What cleaning a server's message can raise: a shape no listing has, nesting too deep."""
POLICY_CHECK_S: Final = 0.5
"""How long a tool result waits for the policy check its call started to read the file (a slow
disk, a stuck mount): past it the result is routed under the policy in force."""
POLICY_COMPILE_S: Final = 10.0
"""How long it then waits for a changed file to compile and install. Compiling is CPU work on a
file within the loader's limits (0.15 s for the bundled policy on a quiet machine, the first
time in a process; more on a loaded one), so an edit applies to the next call; past it the
result is routed under the policy in force, and the log says so."""
FIRST_REQUEST_S: Final = 10.0
"""How long a relay whose server is gone waits for the client's first request, to answer it."""


@dataclass
class Pending:
    method: str
    request_id: Any
    timer: asyncio.TimerHandle | None
    call: Call | None = None
    policy_check: PolicyCheck | None = None
    """The policy reload this call started, off the request path (`--policy` is watched)."""


SESSION_LABEL: ContextVar[str] = ContextVar("visiongate_session_label", default="")
"""Which session a log line is about, where one process relays many (the gateway sets it in
each session's task; the relay's tasks inherit it)."""


def log(text: str) -> None:
    label = SESSION_LABEL.get()
    where = f" [{label}]" if label else ""
    print(f"visiongate proxy{where}: {text}", file=sys.stderr, flush=True)


class RelayState:
    """One client, one server, one gate: what both sides of the relay read and change."""

    def __init__(
        self,
        downstream: Downstream,
        upstream: Upstream,
        calls: CallRouter,
        gate: Gate,
        *,
        timeout: float,
        max_result_bytes: int,
        watch_policy: bool = False,
    ) -> None:
        self._down = downstream
        self._up = upstream
        self._calls = calls
        self._gate = gate
        self._timeout = timeout
        self._limit = max_result_bytes
        self._watch = watch_policy
        self._pending: dict[IdKey, Pending] = {}
        self._task_tools: dict[str, str | None] = {}
        self._code: int | None = None
        self._expired: asyncio.Queue[IdKey] = asyncio.Queue()
        """Requests past their deadline, from the loop's timers to `_deadline_loop`."""
        self._answers: TaskGroup | None = None
        self._readers: TaskGroup | None = None
        self._own = OwnRequests(upstream.send, timeout)
        calls.ask_upstream(self._own.request)
        self._gone: str | None = None
        """Why the server went away, once it did: later requests are answered with it."""
        self._requests = 0
        self._first_request = asyncio.Event()
        self._heard = False
        """Whether the server ever sent a line (a server that never ran is told apart)."""
        self._routing: dict[int, tuple[Any, str]] = {}
        """Answers being routed (out of `_pending` already), by task: owed if we are stopped."""

    def _stop(self, code: int) -> None:
        """End the session; the first reason to stop gives the exit status."""
        if self._code is None:
            self._code = code
        if self._readers is not None:
            self._readers.cancel_scope.cancel()

    def _start(self, function: Any, *args: Any) -> None:
        assert self._answers is not None
        self._answers.start_soon(function, *args)

    async def _to_client(self, data: bytes) -> None:
        try:
            await self._down.send(data)
        except ClientGone:
            self._stop(0)

    async def _to_upstream(self, data: bytes) -> None:
        try:
            await self._up.send(data)
        except (UpstreamClosed, ValueError) as error:
            log(f"cannot write to the MCP server: {untrusted_line(str(error), 200)}")

    def _take(self, key: IdKey | None) -> Pending | None:
        """The request in flight under `key`, no longer pending: its deadline is cancelled."""
        pending = self._pending.pop(key, None) if key is not None else None
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        return pending

    def _forget(self, request_id: Any, outcome: str) -> Pending | None:
        pending = self._take(id_key(request_id))
        if pending is not None and pending.call is not None:
            self._calls.failed(pending.call, outcome, f"`{pending.method}` {outcome}")
        return pending

    def _deadline_passed(self, key: IdKey) -> None:
        # A timer callback runs outside any task: hand the work to a task of the relay.
        self._expired.put_nowait(key)

    async def _answer_gone(self, request_id: Any, method: str) -> None:
        self._requests += 1
        self._first_request.set()
        text = self._gone_text(method)
        await self._to_client(error_response(request_id, UPSTREAM_CLOSED, text))

    def _gone_text(self, method: str) -> str:
        shown = untrusted_line(method, 60)
        then = (
            f" before answering `{shown}`" if self._heard else f", so `{shown}` cannot be answered"
        )
        return f"visiongate proxy: the MCP server `{self._up.label}` {self._gone}{then}"
