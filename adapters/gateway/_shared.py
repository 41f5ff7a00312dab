"""`--upstream shared`: one server process for every session of the gateway (issue 40).

A server that keeps no state per user need not run once per session: here one process (a
stdio command) serves them all, and each session still has its own relay, router, model, lane,
image cache directory, `visiongate_view_image` memory, credentials and limits. Each session's
relay talks to a `SharedUpstream`, which looks to it like a server of its own; underneath:

- **Ids are remapped.** Every request a session sends gets a fresh id on the server's side (a
  counter of this process), and its answer goes back to that session only, under the id the
  session gave. A `progressToken` is remapped the same way, so progress reaches the session
  whose call asked for it, and a `notifications/cancelled` names the server's id of the
  session's own request (one for another session's request is dropped).
- **One handshake.** The first session's `initialize` goes to the server and its answer is
  kept: every later session gets that answer under its own id, and the server hears
  `notifications/initialized` once. A server that answers `initialize` with an error is asked
  again by the next session.
- **The server's requests** (sampling, elicitation, roots, ping) name no request of ours on a
  stdio wire, so they go to the session that has calls open when the server asks, if exactly
  one session has: its client answers, and only its answer is passed on. When several sessions
  have calls open, nobody can tell whose call asked, so the gateway answers the server with an
  error (-32603) rather than show one user's prompt to another; with none open, it answers a
  `ping` itself and anything else with that error. A server that samples or elicits during
  calls of several users at once wants `per-session`.
- **Notifications that belong to no request** (`list_changed`, `resources/updated`, log
  messages) are broadcast to every session: they all see the same server.
- **The server going away** ends every session's upstream at once (their calls in flight are
  answered with the reason, as in `per-session`); the next session to open starts a new one.
  The gateway stops it when it stops, and the watchdog of `mcp._child` if the gateway is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, TextIO

import anyio
import anyio.abc
import msgspec

from visiongate.kernel._framing import Oversized

from ..mcp._child import Child, SpawnError, server_label, start_server
from ..proxy._jsonrpc import INTERNAL_ERROR, IdKey, encode, error_response, id_key
from ..proxy._upstream import StdioUpstream, Unstarted, stdio_upstream
from ..proxy.relay import SESSION_LABEL, log
from ..sanitize._line import untrusted_line

__all__ = ["SharedServer", "SharedUpstream"]

_TOP: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
"""A message's top level, its values left as bytes: an id is changed without reading a result."""
_ANY: Final = msgspec.json.Decoder()
_DETACH_S: Final = 5.0
"""How long an ending session may take to tell the server its calls are cancelled."""
_NO_SESSION: Final = (
    "visiongate gateway: this server is shared by several sessions (--upstream shared) and asked "
    "while {why}, so no session can be told whose call asked; run it with --upstream per-session"
)


class SharedUpstream:
    """One session's view of the shared server: the relay's `Upstream`."""

    transport = "stdio"

    def __init__(self, server: _Running, label: str) -> None:
        self.label = label
        self._server = server
        self._inbox: asyncio.Queue[bytes | Oversized | None] = asyncio.Queue()
        self.open: dict[int, Any] = {}
        """The server's ids of this session's requests still unanswered -> the session's ids."""

    async def send(self, message: bytes) -> None:
        await self._server.from_session(self, message)

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        while (line := await self._inbox.get()) is not None:
            yield line

    async def gone(self) -> str:
        return self._server.reason or "closed the connection"

    def deliver(self, line: bytes | Oversized | None) -> None:
        self._inbox.put_nowait(line)


class SharedServer:
    """The one server of a gateway in `shared` mode, started when a session first needs it."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        max_message_bytes: int,
        start: Callable[[Callable[..., Coroutine[Any, Any, None]]], Awaitable[None]],
        errlog: TextIO | None = None,
    ) -> None:
        self._command = tuple(command)
        self._limit = max_message_bytes
        self._start = start
        """The gateway's task group's `start`: the server's task runs beside the sessions."""
        self._errlog = errlog
        self._running: _Running | None = None
        self._lock = anyio.Lock()
        self.starts = 0

    @asynccontextmanager
    async def connected(self, label: str) -> AsyncIterator[Any]:
        """A session's upstream while the session lives (the server started if it is not)."""
        running = await self._current()
        if isinstance(running, SpawnError):
            yield Unstarted(server_label(self._command), running.reason)
            return
        upstream = running.attach(label)
        try:
            yield upstream
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_DETACH_S):
                await running.detach(upstream)

    async def _current(self) -> _Running | SpawnError:
        async with self._lock:
            if self._running is not None and self._running.reason is None:
                return self._running
            started = await anyio.to_thread.run_sync(start_server, self._command)
            if isinstance(started, SpawnError):
                log(str(started))
                return started
            self.starts += 1
            running = _Running(started)
            await self._start(lambda task_status: running.serve(self, task_status))
            self._running = running
            log(f"started the shared server {started.label} (pid {started.process.pid})")
            return running

    async def stop(self) -> None:
        if self._running is not None:
            await self._running.stop()


class _Running:
    """One process of the shared server and the sessions attached to it."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.reason: str | None = None
        """Why the server went away, once it did."""
        self._upstream: StdioUpstream | None = None
        self._sessions: set[SharedUpstream] = set()
        self._ids = itertools.count(1)
        self._requests: dict[int, SharedUpstream] = {}
        """The server's ids of requests in flight -> the session that sent each."""
        self._tokens: dict[IdKey, tuple[SharedUpstream, Any]] = {}
        """Progress tokens the server was given -> the session and the token it gave."""
        self._asked: dict[IdKey, SharedUpstream] = {}
        """The server's own requests in flight -> the session asked to answer."""
        self._handshake: msgspec.Raw | None = None
        """The server's answer to the first `initialize`, for every later session."""
        self._handshaking: anyio.Event | None = None
        self._handshake_id: int | None = None
        self._initialized_sent = False
        self._stopped = anyio.Event()
        self._scope = anyio.CancelScope()

    # -- the process ------------------------------------------------------------------------------

    async def serve(self, owner: SharedServer, task_status: anyio.abc.TaskStatus[None]) -> None:
        SESSION_LABEL.set("shared server")  # its task began in a session's: not that session's
        try:
            with self._scope:
                async with stdio_upstream(
                    self.child, max_message_bytes=owner._limit, errlog=owner._errlog
                ) as upstream:
                    self._upstream = upstream
                    task_status.started()
                    async for line in upstream.lines():
                        await self._from_server(line)
                    self.reason = await upstream.gone()
        finally:
            self._ended(self.reason or "was stopped")

    def _ended(self, reason: str) -> None:
        self.reason = reason
        log(f"the shared server {reason}; {len(self._sessions)} session(s) lose it")
        for session in self._sessions:
            session.deliver(None)
        if self._handshaking is not None:
            self._handshaking.set()  # the sessions waiting on it see the server gone
        self._stopped.set()

    async def stop(self) -> None:
        self._scope.cancel()
        with anyio.move_on_after(15):
            await self._stopped.wait()

    def attach(self, label: str) -> SharedUpstream:
        session = SharedUpstream(self, label)
        self._sessions.add(session)
        if self.reason is not None:
            session.deliver(None)
        return session

    async def detach(self, session: SharedUpstream) -> None:
        """The session ended: its requests' answers have nobody to go to, so the server is
        told they are cancelled."""
        self._sessions.discard(session)
        for server_id in list(session.open):
            self._requests.pop(server_id, None)
            note = {"requestId": server_id, "reason": "the client's session ended"}
            message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": note}
            await self._send_quietly(encode(message))
        session.open.clear()
        for key in [key for key, (owner, _) in self._tokens.items() if owner is session]:
            del self._tokens[key]
        for key in [key for key, owner in self._asked.items() if owner is session]:
            del self._asked[key]

    async def _send_quietly(self, message: bytes) -> None:
        with contextlib.suppress(Exception):  # the server went away: nothing left to cancel
            await self._send(message)

    async def _send(self, message: bytes) -> None:
        if self._upstream is None or self.reason is not None:
            from ..proxy._upstream import UpstreamClosed

            raise UpstreamClosed(self.reason or "not started")
        await self._upstream.send(message)

    # -- from a session -----------------------------------------------------------------------

    async def from_session(self, session: SharedUpstream, message: bytes) -> None:
        top = _TOP.decode(message)
        method = _ANY.decode(top["method"]) if "method" in top else None
        if method is None:
            return await self._answer_from(session, top)
        if "id" not in top:
            return await self._notification_from(session, method, top, message)
        if method == "initialize":
            return await self._initialize(session, top)
        await self._request_from(session, top)

    async def _request_from(self, session: SharedUpstream, top: dict[str, msgspec.Raw]) -> int:
        server_id = next(self._ids)
        session.open[server_id] = _ANY.decode(top["id"])
        self._requests[server_id] = session
        top["id"] = msgspec.Raw(encode(server_id))
        params = bytes(top["params"]) if "params" in top else b""
        if b"progressToken" in params:
            top["params"] = msgspec.Raw(self._token_for(session, server_id, params))
        try:
            await self._send(encode(top))
        except Exception:
            self._requests.pop(server_id, None)
            session.open.pop(server_id, None)
            raise
        return server_id

    def _token_for(self, session: SharedUpstream, server_id: int, params: bytes) -> bytes:
        """`params` with its `_meta.progressToken` replaced by one the server knows as ours."""
        value = _ANY.decode(params)
        meta = value.get("_meta") if isinstance(value, dict) else None
        given = meta.get("progressToken") if isinstance(meta, dict) else None
        if id_key(given) is None:
            return params
        assert isinstance(meta, dict)
        token = f"vg-{server_id}"
        meta["progressToken"] = token
        self._tokens[(True, token)] = (session, given)
        return encode(value)

    async def _notification_from(
        self, session: SharedUpstream, method: str, top: dict[str, msgspec.Raw], raw: bytes
    ) -> None:
        if method == "notifications/initialized":
            if not self._initialized_sent:
                self._initialized_sent = True
                await self._send(raw)
            return
        if method == "notifications/cancelled":
            params = _ANY.decode(top["params"]) if "params" in top else {}
            theirs = params.get("requestId") if isinstance(params, dict) else None
            found = next((sid for sid, own in session.open.items() if own == theirs), None)
            if found is None:
                return  # not a request of this session's in flight: nothing to cancel
            params["requestId"] = found
            top["params"] = msgspec.Raw(encode(params))
            await self._send(encode(top))
            return
        await self._send(raw)  # roots/list_changed and the like: the server hears it

    async def _answer_from(self, session: SharedUpstream, top: dict[str, msgspec.Raw]) -> None:
        key = id_key(_ANY.decode(top["id"])) if "id" in top else None
        if key is None or self._asked.get(key) is not session:
            log(f"{session.label}: an answer to no request of the server's to it was dropped")
            return
        del self._asked[key]
        await self._send(encode(top))

    async def _initialize(self, session: SharedUpstream, top: dict[str, msgspec.Raw]) -> None:
        while self._handshake is None and self._handshaking is not None and not self.reason:
            await self._handshaking.wait()  # another session's handshake is on its way
        if self._handshake is not None:
            answer = {"jsonrpc": msgspec.Raw(b'"2.0"'), "id": top["id"], "result": self._handshake}
            session.deliver(encode(answer))
            return
        self._handshaking = anyio.Event()
        try:
            self._handshake_id = await self._request_from(session, top)
        except Exception:
            self._handshook({})
            raise

    # -- from the server ------------------------------------------------------------------------

    async def _from_server(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            return self._oversized(line)
        try:
            top = _TOP.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError):
            log("the shared server wrote a line that is not JSON; it was dropped")
            return
        method = _ANY.decode(top["method"]) if "method" in top else None
        if method is None:
            return self._answer(top)
        if "id" in top:
            return await self._asks(method, top, line)
        if method == "notifications/progress":
            return self._progress(top)
        for session in self._sessions:
            session.deliver(line)

    def _answer(self, top: dict[str, msgspec.Raw]) -> None:
        server_id = _ANY.decode(top["id"]) if "id" in top else None
        if (
            not isinstance(server_id, int)
            or (session := self._requests.pop(server_id, None)) is None
        ):
            return  # its session ended, or an id the server made up
        theirs = session.open.pop(server_id)
        if server_id == self._handshake_id:
            self._handshook(top)
        top["id"] = msgspec.Raw(encode(theirs))
        session.deliver(encode(top))

    def _handshook(self, top: dict[str, msgspec.Raw]) -> None:
        """The answer to the one `initialize` in flight: kept when it is a result."""
        if "result" in top:
            self._handshake = top["result"]
        event, self._handshaking, self._handshake_id = self._handshaking, None, None
        if event is not None:
            event.set()

    def _oversized(self, line: Oversized) -> None:
        server_id = line.found
        if isinstance(server_id, int) and (session := self._requests.pop(server_id, None)):
            session.deliver(Oversized(line.size, session.open.pop(server_id)))

    def _progress(self, top: dict[str, msgspec.Raw]) -> None:
        params = _ANY.decode(top["params"]) if "params" in top else {}
        token = id_key(params.get("progressToken")) if isinstance(params, dict) else None
        found = self._tokens.get(token) if token is not None else None
        if found is None:
            return  # a call that ended, or a token nobody gave
        session, given = found
        params["progressToken"] = given
        top["params"] = msgspec.Raw(encode(params))
        session.deliver(encode(top))

    async def _asks(self, method: str, top: dict[str, msgspec.Raw], line: bytes) -> None:
        asking = set(self._requests.values())
        key = id_key(_ANY.decode(top["id"]))
        if len(asking) == 1 and key is not None:
            (session,) = asking
            self._asked[key] = session
            session.deliver(line)
            return
        request_id = _ANY.decode(top["id"])
        if not asking and method == "ping":
            await self._send(encode({"jsonrpc": "2.0", "id": request_id, "result": {}}))
            return
        why = "no session had a call open" if not asking else "several sessions had calls open"
        shown = untrusted_line(method, 60)
        log(f"the shared server asked `{shown}` while {why}: answered with an error")
        await self._send(error_response(request_id, INTERNAL_ERROR, _NO_SESSION.format(why=why)))
