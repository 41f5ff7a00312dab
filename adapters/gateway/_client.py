"""The client's side of one gateway session: the SDK's Streamable HTTP server transport.

The transport (`mcp.server.streamable_http.StreamableHTTPServerTransport`) reads each POST,
validates it as JSON-RPC and hands it over as the SDK's message model; the relay reads it as
the JSON bytes it would read from stdio. What the relay sends goes back through the transport,
which writes a response on the SSE stream of the POST that carried its request, and any other
message on the stream of the request it relates to, else on the session's GET stream.

A stdio server's messages say nothing of the request they belong to, so the relation is
inferred here: a `notifications/progress` belongs to the request that gave its
`progressToken`; a server's request (sampling, elicitation, roots) to the newest client
request still open, since a server asks while it works on a call. Anything else (logs, list
changes, resource updates, a request while no call is open) goes on the GET stream, and is
held (up to `HELD_MESSAGES`) while the client has none open: the SDK client opens it only as
it sends `notifications/initialized`, and a server may ask for roots at that very moment.

A client's cancellation of a request still open ends that request's POST stream with the
transport's own `Request cancelled` answer (the stream of this protocol era ends only with an
answer); the relay has forgotten the request by then, so a late answer is dropped.

**The direct lane.** A request POSTed in a session that is under way (a `tools/call`, a
listing) does not go through the transport: the gateway hands its body to the relay as it came
(`post`) and answers the POST itself (`_direct`), from a queue of its own. Its messages are
routed here on their top level alone (a `msgspec.Raw` decode: the id, the method), never
validated into the SDK's models and dumped again; an answer is checked for the shape the SDK's
client requires (`jsonrpc` "2.0", an object `result` or an `error` with a code and a message),
and a malformed one becomes an error as on the transport. Everything else (the `initialize`,
GET streams, DELETE, notifications, the client's answers) stays the transport's.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final

import anyio
import msgspec

from visiongate.kernel._framing import Oversized

from ..proxy._downstream import ClientGone
from ..proxy._jsonrpc import INTERNAL_ERROR, error_response, id_key
from ..proxy._relay import log
from ..sanitize._line import untrusted_line

__all__ = ["HELD_MESSAGES", "HttpDownstream"]

HELD_MESSAGES: Final = 256
"""Messages for the GET stream kept while the client has none open; older ones are dropped."""
_OPEN_KEPT: Final = 10_000
_CLOSED: Final = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
_TOP: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
"""A message's top level, its values left as bytes: routed without reading a result."""
_ANY: Final = msgspec.json.Decoder()
REQUEST_CANCELLED: Final = -32800
"""The SDK transport's code for a request its client cancelled (`Request cancelled`)."""
Counter = Callable[[str, int], None]
Slot = asyncio.Queue[tuple[bytes, bool] | None]
"""A direct POST's messages, each with whether it is the answer (the last); None: the
client went away."""
_AfterYield = Callable[[], Awaitable[None]] | None


class _Open:
    """A client request waiting for its answer."""

    __slots__ = ("request_id", "slot", "token", "unanswered")

    def __init__(self, request_id: Any, token: Any, unanswered: Any, slot: Slot | None) -> None:
        self.request_id = request_id
        self.token = token
        self.unanswered: Callable[[], Awaitable[None]] | None = unanswered
        self.slot = slot
        """The direct POST waiting for the answer; None: the transport has the request."""


class HttpDownstream:
    """One session's client, through the transport's read and write streams."""

    def __init__(self, read: Any, write: Any, *, count: Counter | None = None) -> None:
        self._read = read
        self._write = write
        self._count = count
        self._open: dict[Any, _Open] = {}
        self._progress: dict[Any, Any] = {}
        """progressToken (as `id_key`) -> the key of the request that gave it."""
        self._held: deque[Any] = deque()
        self._listening = 0
        self._flushing = False
        self._inbox: asyncio.Queue[tuple[bytes, _AfterYield] | None] = asyncio.Queue()
        """What the client sent, in order: direct POSTs and what the transport read."""
        self._pump: asyncio.Task[None] | None = None
        self.first_sent = asyncio.Event()
        self.dropped = 0
        """GET-stream messages dropped while none was open and the hold was full."""

    # -- from the client ------------------------------------------------------------------------

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's messages as JSON, until the session ends (then `ClientGone`: nobody
        will read an answer, so the relay stops at once)."""
        if self._pump is None:
            self._pump = asyncio.ensure_future(self._pumped())
        while (item := await self._inbox.get()) is not None:
            data, after = item
            yield data
            if after is not None:
                await after()
        self._inbox.put_nowait(None)  # a later reader hears the same
        raise ClientGone("the session ended")

    async def _pumped(self) -> None:
        """The transport's messages into the inbox, as JSON (the direct lane's come there
        too), until its stream closes."""
        try:
            async for item in self._read:
                if isinstance(item, Exception):
                    log(f"the transport failed on a request: {_shown(item)}")
                    continue
                message = item.message
                data = message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                if self._count is not None:
                    self._count("from_client", len(data))
                cancelled = self._note_incoming(message, item.metadata)
                self._inbox.put_nowait((data, _ending(cancelled)))
        except _CLOSED:
            pass
        finally:
            self._inbox.put_nowait(None)

    def post(self, data: bytes, message: Mapping[str, Any]) -> Slot:
        """A request of a direct POST (`message` is `data` decoded, an object with a method
        and an id): handed to the relay; the queue its answer, and what comes before it
        (progress, the server's requests), will be put on."""
        slot: Slot = asyncio.Queue()
        if self._count is not None:
            self._count("from_client", len(data))
        self._opened(message["id"], message.get("params"), None, slot)
        self._inbox.put_nowait((data, None))
        return slot

    def abandon(self, request_id: Any) -> None:
        """A direct POST's client went away: its answer, when it comes, is dropped."""
        found = self._open.get(id_key(request_id))
        if found is not None and found.slot is not None:
            self._closed(id_key(request_id))

    def end(self) -> None:
        """The session is over: a direct POST still waiting gets an error, never silence."""
        for key, found in list(self._open.items()):
            if found.slot is not None:
                self._closed(key)
                text = "visiongate gateway: the session ended before this request was answered"
                answer = error_response(found.request_id, INTERNAL_ERROR, text)
                found.slot.put_nowait((answer, True))
        if self._pump is not None:
            self._pump.cancel()

    def _note_incoming(self, message: Any, metadata: Any) -> _Open | None:
        """Track a request until its answer; a cancellation's request, if it was open."""
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        params = getattr(message, "params", None) or {}
        if method is None:
            return None
        if request_id is not None:
            unanswered = getattr(metadata, "on_request_unanswered", None)
            self._opened(request_id, params, unanswered, None)
            return None
        if method == "notifications/cancelled":
            return self._closed(id_key(params.get("requestId")))
        return None

    def _opened(self, request_id: Any, params: Any, unanswered: Any, slot: Slot | None) -> None:
        key = id_key(request_id)
        if key is None:
            return
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = id_key(meta.get("progressToken")) if isinstance(meta, dict) else None
        if len(self._open) >= _OPEN_KEPT:
            oldest = self._closed(next(iter(self._open)))
            if oldest is not None and oldest.slot is not None:
                oldest.slot.put_nowait((_cancelled(oldest.request_id), True))
        self._open[key] = _Open(request_id, token, unanswered, slot)
        if token is not None:
            self._progress[token] = key

    def _closed(self, key: Any) -> _Open | None:
        done = self._open.pop(key, None)
        if done is not None and done.token is not None:
            self._progress.pop(done.token, None)
        return done

    # -- to the client --------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        """Deliver one message on the stream it belongs to; `ClientGone` once the session
        ended. A message the SDK's model refuses is logged and, if it answers a request,
        replaced by an error saying so, so the client is never left waiting."""
        try:
            top = _TOP.decode(message)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return await self._unsendable(message)
        if self._count is not None:
            self._count("to_client", len(message))
        if "method" not in top:  # an answer
            key = id_key(_ANY.decode(top["id"])) if "id" in top else None
            found = self._open.get(key) if key is not None else None
            if found is not None and found.slot is not None:
                self._closed(key)
                if not _answer_shaped(top):
                    return await self._unsendable(message, found)
                found.slot.put_nowait((message, True))
                self.first_sent.set()
                return
            return await self._via_transport(message, None, answer=True)
        related = self._related(top)
        if related is not None and related.slot is not None:
            related.slot.put_nowait((message, False))
            return
        await self._via_transport(message, related, answer=False)

    async def _via_transport(self, message: bytes, related: _Open | None, *, answer: bool) -> None:
        from mcp.shared.message import ServerMessageMetadata, SessionMessage

        parsed = _validated(message)
        if parsed is None:
            return await self._unsendable(message)
        if answer:
            self._closed(id_key(parsed.id))
        elif related is None and (not self._listening or self._flushing):
            self._hold(parsed)
            return
        metadata = (
            ServerMessageMetadata(related_request_id=related.request_id)
            if related is not None
            else None
        )
        await self._deliver(SessionMessage(parsed, metadata=metadata))
        self.first_sent.set()

    def _related(self, top: Mapping[str, msgspec.Raw]) -> _Open | None:
        """The open request a server's message belongs to, None for the GET stream."""
        method = _ANY.decode(top["method"])
        if method == "notifications/progress":
            params = _ANY.decode(top["params"]) if "params" in top else None
            token = params.get("progressToken") if isinstance(params, dict) else None
            key = self._progress.get(id_key(token))
            return self._open.get(key) if key is not None else None
        if "id" in top and self._open:
            return next(reversed(self._open.values()))
        return None

    def _hold(self, message: Any) -> None:
        if len(self._held) >= HELD_MESSAGES:
            dropped = self._held.popleft()
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                method = untrusted_line(str(getattr(dropped, "method", "")), 60)
                log(
                    f"the client opened no GET stream: a held `{method}` message was dropped "
                    f"({self.dropped} so far; at most {HELD_MESSAGES} are kept)"
                )
        self._held.append(message)

    async def _deliver(self, message: Any) -> None:
        try:
            await self._write.send(message)
        except _CLOSED:
            raise ClientGone("the session ended") from None

    async def _unsendable(self, data: bytes, direct: _Open | None = None) -> None:
        problem = "not a JSON-RPC message the MCP SDK accepts"
        log(f"a message for the client was refused: {problem}")
        text = f"visiongate gateway: the answer to this request was malformed ({problem})"
        if direct is not None and direct.slot is not None:
            answer = error_response(direct.request_id, INTERNAL_ERROR, text)
            direct.slot.put_nowait((answer, True))
            return
        request_id = _id_of(data)
        if request_id is not None and self._closed(id_key(request_id)) is not None:
            await self.send(error_response(request_id, INTERNAL_ERROR, text))

    # -- the GET stream -------------------------------------------------------------------------

    async def listening(self) -> None:
        """The client opened its GET stream: what was held goes out on it, in order."""
        from mcp.shared.message import SessionMessage

        self._listening += 1
        if self._flushing:
            return
        self._flushing = True
        try:
            # The transport registers the stream in the task that feeds it, started next to
            # the one that sent the response's headers: one turn of the loop lets it run.
            await anyio.sleep(0)
            while self._held and self._listening:
                await self._deliver(SessionMessage(self._held.popleft()))
        finally:
            self._flushing = False

    @property
    def has_stream(self) -> bool:
        """Whether the client has a GET stream open."""
        return self._listening > 0

    def not_listening(self) -> None:
        """The client's GET stream closed."""
        self._listening = max(0, self._listening - 1)

    async def close(self) -> None:
        """Nothing to close: the session's transport owns the streams."""


def _ending(cancelled: _Open | None) -> _AfterYield:
    """What ends a cancelled request's POST once the relay has read the cancellation: the
    transport's own answer, or the direct lane's same words."""
    if cancelled is None:
        return None
    if cancelled.slot is not None:
        slot, request_id = cancelled.slot, cancelled.request_id

        async def end_direct() -> None:
            slot.put_nowait((_cancelled(request_id), True))

        return end_direct
    return cancelled.unanswered


def _cancelled(request_id: Any) -> bytes:
    return error_response(request_id, REQUEST_CANCELLED, "Request cancelled")


def _answer_shaped(top: Mapping[str, msgspec.Raw]) -> bool:
    """Whether an answer has the shape the SDK's client requires: `jsonrpc` "2.0" and an
    object `result`, or an `error` object with an integer code and a string message."""
    if bytes(top.get("jsonrpc", b"")) != b'"2.0"' or ("result" in top) == ("error" in top):
        return False
    if "result" in top:
        return bytes(top["result"]).startswith(b"{")
    error = _ANY.decode(top["error"])
    return (
        isinstance(error, dict)
        and type(error.get("code")) is int
        and isinstance(error.get("message"), str)
    )


def _validated(data: bytes) -> Any:
    from mcp.types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        return jsonrpc_message_adapter.validate_json(data, by_name=False)
    except (ValidationError, ValueError):
        return None


def _id_of(data: bytes) -> Any:
    try:
        body = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return body.get("id") if isinstance(body, dict) else None


def _shown(error: BaseException) -> str:
    return untrusted_line(str(error) or type(error).__name__, 200)
