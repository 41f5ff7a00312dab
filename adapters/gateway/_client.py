"""The client's side of one gateway session: the relay's `Downstream` over the session's HTTP
exchanges (`_transport`), in JSON bytes both ways.

What the client POSTs reaches the relay as the bytes it sent (checked already by `_body`);
what the relay sends is routed on its top level alone (a `msgspec.Raw` decode: the id, the
method), never validated into the SDK's models and dumped again. An answer goes to the POST
that carried its request; any other message to the request it relates to, else to the
session's GET stream.

A stdio server's messages say nothing of the request they belong to, so the relation is
inferred here: a `notifications/progress` belongs to the request that gave its
`progressToken`; a server's request (sampling, elicitation, roots) to the newest client
request still open, since a server asks while it works on a call. Anything else (logs, list
changes, resource updates, a request while no call is open) goes on the GET stream, and is
held (up to `HELD_MESSAGES`) while the client has none open: the SDK client opens it only as
it sends `notifications/initialized`, and a server may ask for roots at that very moment.

A client's cancellation of a request still open ends that request's POST with an error
`Request cancelled` (-32800, the SDK transport's words: the stream of this protocol era ends
only with an answer) once the relay has read the cancellation; the relay has forgotten the
request by then, so a late answer is dropped. A message for the client that lacks the shape
the SDK's client requires (`jsonrpc` "2.0"; an answer with an object `result` or an `error`
with a code and a message; a method that is a string and params that are an object) is
logged and, if it answers a request, replaced by an error saying so, so the client is never
left waiting.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

import msgspec

from visiongate.kernel._framing import Oversized

from ..proxy._downstream import ClientGone
from ..proxy._jsonrpc import INTERNAL_ERROR, error_response, id_key
from ..proxy.relay import log
from ..sanitize._line import untrusted_line

__all__ = ["HELD_MESSAGES", "REQUEST_CANCELLED", "HttpDownstream", "Slot"]

HELD_MESSAGES: Final = 256
"""Messages for the GET stream kept while the client has none open; older ones are dropped."""
REQUEST_CANCELLED: Final = -32800
"""The code of the answer that ends a cancelled request's POST (the SDK transport's)."""
_OPEN_KEPT: Final = 10_000
_TOP: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
"""A message's top level, its values left as bytes: routed without reading a result."""
_ANY: Final = msgspec.json.Decoder()
Counter = Callable[[str, int], None]
Slot = asyncio.Queue[tuple[bytes, bool] | None]
"""A POST's messages, each with whether it is the answer (the last); None: nothing more comes
(its client went away, or the session ended)."""
_AfterYield = Callable[[], None] | None


class _Open:
    """A client request waiting for its answer."""

    __slots__ = ("request_id", "slot", "token")

    def __init__(self, request_id: Any, token: Any, slot: Slot) -> None:
        self.request_id = request_id
        self.token = token
        self.slot = slot


class HttpDownstream:
    """One session's client: the POSTs that carry its messages and its GET stream."""

    def __init__(self, *, count: Counter | None = None) -> None:
        self.count = count
        """Counts the bytes of each message, by direction (the gateway's metrics)."""
        self._open: dict[Any, _Open] = {}
        self._progress: dict[Any, Any] = {}
        """progressToken (as `id_key`) -> the key of the request that gave it."""
        self._held: deque[bytes] = deque()
        self._stream: Slot | None = None
        """The GET stream's queue while one is open."""
        self._inbox: asyncio.Queue[tuple[bytes, _AfterYield] | None] = asyncio.Queue()
        self._ended = False
        self.first_sent = asyncio.Event()
        self.dropped = 0
        """GET-stream messages dropped while none was open and the hold was full."""

    # -- from the client ------------------------------------------------------------------------

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's messages as JSON, until the session ends (then `ClientGone`: nobody
        will read an answer, so the relay stops at once)."""
        while (item := await self._inbox.get()) is not None:
            data, after = item
            yield data
            if after is not None:
                after()
        self._inbox.put_nowait(None)  # a later reader hears the same
        raise ClientGone("the session ended")

    def request(self, data: bytes, message: Mapping[str, Any]) -> Slot:
        """A POSTed request (`message` is `data` decoded: an object with a method and an id)
        for the relay; the queue its answer, and what comes before it (progress, the server's
        requests), will be put on."""
        slot: Slot = asyncio.Queue()
        if self._ended:
            slot.put_nowait(None)
            return slot
        key = id_key(message["id"])
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = id_key(meta.get("progressToken")) if isinstance(meta, dict) else None
        if len(self._open) >= _OPEN_KEPT:
            oldest = self._closed(next(iter(self._open)))
            if oldest is not None:
                oldest.slot.put_nowait((_cancelled(oldest.request_id), True))
        self._open[key] = _Open(message["id"], token, slot)
        if token is not None:
            self._progress[token] = key
        self._received(data, None)
        return slot

    def other(self, data: bytes, message: Mapping[str, Any]) -> None:
        """A POSTed notification or answer for the relay. A cancellation of a request still
        open ends that request's POST once the relay has read it."""
        after: _AfterYield = None
        if message.get("method") == "notifications/cancelled":
            params = message.get("params")
            theirs = params.get("requestId") if isinstance(params, dict) else None
            cancelled = self._closed(id_key(theirs))
            if cancelled is not None:
                slot, request_id = cancelled.slot, cancelled.request_id
                after = lambda: slot.put_nowait((_cancelled(request_id), True))  # noqa: E731
        self._received(data, after)

    def _received(self, data: bytes, after: _AfterYield) -> None:
        if self.count is not None:
            self.count("from_client", len(data))
        if not self._ended:
            self._inbox.put_nowait((data, after))

    def abandon(self, request_id: Any) -> None:
        """A POST's client went away: its answer, when it comes, is dropped."""
        self._closed(id_key(request_id))

    def end(self) -> None:
        """The session is over: the relay stops reading, a POST still waiting gets an error
        (never silence) and the GET stream ends."""
        if self._ended:
            return
        self._ended = True
        self._inbox.put_nowait(None)
        for key, found in list(self._open.items()):
            self._closed(key)
            text = "visiongate gateway: the session ended before this request was answered"
            found.slot.put_nowait((error_response(found.request_id, INTERNAL_ERROR, text), True))
        if self._stream is not None:
            self._stream.put_nowait(None)

    def _closed(self, key: Any) -> _Open | None:
        done = self._open.pop(key, None) if key is not None else None
        if done is not None and done.token is not None:
            self._progress.pop(done.token, None)
        return done

    # -- to the client --------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        """Deliver one message where it belongs (see the module docstring); `ClientGone`
        once the session ended."""
        if self._ended:
            raise ClientGone("the session ended")
        try:
            top = _TOP.decode(message)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return self._unsendable(message)
        if self.count is not None:
            self.count("to_client", len(message))
        if "method" not in top:  # an answer
            found = self._closed(id_key(_ANY.decode(top["id"]))) if "id" in top else None
            if found is None:
                return  # its request was cancelled, or its client went away
            if not _answer_shaped(top):
                return self._unsendable(message, found)
            found.slot.put_nowait((message, True))
            self.first_sent.set()
            return
        if not _message_shaped(top):
            return self._unsendable(message)
        related = self._related(top)
        if related is not None:
            related.slot.put_nowait((message, False))
        elif self._stream is not None:
            self._stream.put_nowait((message, False))
        else:
            self._hold(message)

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

    def _hold(self, message: bytes) -> None:
        if len(self._held) >= HELD_MESSAGES:
            dropped = self._held.popleft()
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                method = untrusted_line(str(_method_of(dropped)), 60)
                log(
                    f"the client opened no GET stream: a held `{method}` message was dropped "
                    f"({self.dropped} so far; at most {HELD_MESSAGES} are kept)"
                )
        self._held.append(message)

    def _unsendable(self, data: bytes, found: _Open | None = None) -> None:
        problem = "not a JSON-RPC message the MCP SDK accepts"
        log(f"a message for the client was refused: {problem}")
        if found is None:
            request_id = _id_of(data)
            found = self._closed(id_key(request_id)) if request_id is not None else None
        if found is not None:
            text = f"visiongate gateway: the answer to this request was malformed ({problem})"
            answer = error_response(found.request_id, INTERNAL_ERROR, text)
            found.slot.put_nowait((answer, True))

    # -- the GET stream -------------------------------------------------------------------------

    def listening(self) -> Slot | None:
        """The client opened its GET stream: the queue its messages go on, what was held
        first, in order; None when one is open already (one per session)."""
        if self._stream is not None:
            return None
        stream: Slot = asyncio.Queue()
        if self._ended:
            stream.put_nowait(None)
        while self._held:
            stream.put_nowait((self._held.popleft(), False))
        self._stream = stream
        return stream

    @property
    def has_stream(self) -> bool:
        """Whether the client has a GET stream open."""
        return self._stream is not None

    def not_listening(self) -> None:
        """The client's GET stream closed; what it did not read is lost with it."""
        self._stream = None

    async def close(self) -> None:
        """Nothing to close: the session's transport owns the exchanges."""


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


def _message_shaped(top: Mapping[str, msgspec.Raw]) -> bool:
    """A request or notification the SDK's client reads: a string method, object params, and
    a string or integer id for a request."""
    if bytes(top.get("jsonrpc", b"")) != b'"2.0"':
        return False
    if not isinstance(_ANY.decode(top["method"]), str):
        return False
    if "params" in top and not bytes(top["params"]).startswith(b"{"):
        return False
    return "id" not in top or id_key(_ANY.decode(top["id"])) is not None


def _method_of(data: bytes) -> Any:
    try:
        top = _TOP.decode(data)
        return _ANY.decode(top["method"]) if "method" in top else ""
    except (msgspec.DecodeError, UnicodeDecodeError):
        return ""


def _id_of(data: bytes) -> Any:
    try:
        body = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return body.get("id") if isinstance(body, dict) else None
