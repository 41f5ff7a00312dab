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
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import anyio
import msgspec

from visiongate.kernel._framing import Oversized

from ..proxy._downstream import ClientGone
from ..proxy._jsonrpc import INTERNAL_ERROR, error_response, id_key
from ..proxy.relay import log
from ..sanitize._line import untrusted_line

__all__ = ["HELD_MESSAGES", "HttpDownstream"]

HELD_MESSAGES: Final = 256
"""Messages for the GET stream kept while the client has none open; older ones are dropped."""
_OPEN_KEPT: Final = 10_000
_CLOSED: Final = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)
Counter = Callable[[str, int], None]


class _Open:
    """A client request waiting for its answer."""

    __slots__ = ("request_id", "token", "unanswered")

    def __init__(self, request_id: Any, token: Any, unanswered: Any) -> None:
        self.request_id = request_id
        self.token = token
        self.unanswered: Callable[[], Awaitable[None]] | None = unanswered


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
        self.first_sent = asyncio.Event()
        self.dropped = 0
        """GET-stream messages dropped while none was open and the hold was full."""

    # -- from the client ------------------------------------------------------------------------

    async def lines(self) -> AsyncIterator[bytes | Oversized]:
        """The client's messages as JSON, until the session ends (then `ClientGone`: nobody
        will read an answer, so the relay stops at once)."""
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
                yield data
                if cancelled is not None and cancelled.unanswered is not None:
                    await cancelled.unanswered()
        except _CLOSED:
            pass
        raise ClientGone("the session ended")

    def _note_incoming(self, message: Any, metadata: Any) -> _Open | None:
        """Track a request until its answer; a cancellation's request, if it was open."""
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        params = getattr(message, "params", None) or {}
        if method is None:
            return None
        if request_id is not None:
            self._opened(request_id, params, metadata)
            return None
        if method == "notifications/cancelled":
            return self._closed(id_key(params.get("requestId")))
        return None

    def _opened(self, request_id: Any, params: Any, metadata: Any) -> None:
        key = id_key(request_id)
        if key is None:
            return
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = id_key(meta.get("progressToken")) if isinstance(meta, dict) else None
        if len(self._open) >= _OPEN_KEPT:
            self._closed(next(iter(self._open)))
        unanswered = getattr(metadata, "on_request_unanswered", None)
        self._open[key] = _Open(request_id, token, unanswered)
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
        from mcp.shared.message import ServerMessageMetadata, SessionMessage

        parsed = _validated(message)
        if parsed is None:
            return await self._unsendable(message)
        if self._count is not None:
            self._count("to_client", len(message))
        related = None
        if hasattr(parsed, "method"):
            related = self._related(parsed)
            if related is None and (not self._listening or self._flushing):
                self._hold(parsed)
                return
        else:
            self._closed(id_key(parsed.id))
        metadata = (
            ServerMessageMetadata(related_request_id=related) if related is not None else None
        )
        await self._deliver(SessionMessage(parsed, metadata=metadata))
        self.first_sent.set()

    def _related(self, message: Any) -> Any:
        """The id of the open request a server's message belongs to, None for the GET stream."""
        params = getattr(message, "params", None) or {}
        if message.method == "notifications/progress":
            key = self._progress.get(id_key(params.get("progressToken")))
            found = self._open.get(key) if key is not None else None
            return found.request_id if found is not None else None
        if getattr(message, "id", None) is not None and self._open:
            return next(reversed(self._open.values())).request_id
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

    async def _unsendable(self, data: bytes) -> None:
        request_id = _id_of(data)
        problem = "not a JSON-RPC message the MCP SDK accepts"
        log(f"a message for the client was refused: {problem}")
        if request_id is not None and self._closed(id_key(request_id)) is not None:
            text = f"visiongate gateway: the answer to this request was malformed ({problem})"
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
