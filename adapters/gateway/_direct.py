"""The direct lane: a request POSTed in a session under way, answered by the gateway itself.

The SDK's transport answers each POST through a task group, memory streams, an SSE response
object with its own tasks, and its message models both ways (the client's message validated
and dumped again, the answer validated and dumped again): most of what a small call cost here
beside the relay. A session's requests after its `initialize` skip all that: the body, checked
already (`_body`), goes to the relay as it came (`HttpDownstream.post`), and what the relay
sends for it comes back on a queue of its own. An answer that comes alone is one
`application/json` body (MCP's Streamable HTTP allows either kind for a request; the SDK's
client, fastmcp and the Inspector read both); a request whose server speaks first (progress,
sampling, elicitation while the call runs) gets an SSE stream, each message an event as it
comes, the answer last. A client that goes away mid-call has its answer dropped, as on the
transport.

Only what the transport would accept comes here (an `Accept` of both JSON and SSE, a JSON body
type); anything else takes the transport's road and hears its words (406, 415).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from starlette.types import Receive, Send

from ._client import HttpDownstream, Slot

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["direct_eligible", "served_directly"]

_JSON_HEADERS: Final = ((b"content-type", b"application/json"),)
_SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
)


def direct_eligible(headers: Any) -> bool:
    """Whether the transport would take this POST as it is: the client accepts both JSON and
    SSE (wildcards as RFC 7231 reads them) and sends JSON."""
    accepted = [
        part.split(";", 1)[0].strip().lower() for part in headers.get("accept", "").split(",")
    ]
    wildcard = "*/*" in accepted
    json = wildcard or "application/json" in accepted or "application/*" in accepted
    sse = wildcard or "text/event-stream" in accepted or "text/*" in accepted
    kind = headers.get("content-type", "").split(";", 1)[0]
    return json and sse and "application/json" in (part.strip() for part in kind.split(","))


async def served_directly(
    session: Session,
    downstream: HttpDownstream,
    body: bytes,
    message: dict[str, Any],
    receive: Receive,
    send: Send,
) -> None:
    """A request answered by the gateway itself, counted in flight until its last byte."""
    counting = True

    def done() -> None:
        nonlocal counting
        if counting:
            counting = False
            session.in_flight -= 1

    session.in_flight += 1
    session.touch()
    try:
        await _answered(downstream, session.id, body, message, receive, send, done)
    finally:
        done()
        session.touch()


async def _answered(
    downstream: HttpDownstream,
    session_id: str,
    body: bytes,
    message: dict[str, Any],
    receive: Receive,
    send: Send,
    done: Any,
) -> int:
    """Hand the request to the relay and write what comes back; the status. `done` is
    called just before the answer's last byte goes out (the request stops counting then)."""
    slot = downstream.post(body, message)
    watcher = asyncio.ensure_future(_disconnect(receive, slot))
    try:
        item = await slot.get()
        if item is None:
            downstream.abandon(message["id"])
            return 499
        data, final = item
        id_header = (b"mcp-session-id", session_id.encode())
        if final:
            length = (b"content-length", str(len(data)).encode())
            start = {"type": "http.response.start", "status": 200}
            await send({**start, "headers": [*_JSON_HEADERS, id_header, length]})
            done()
            await send({"type": "http.response.body", "body": data})
            return 200
        return await _streamed(downstream, message["id"], slot, data, id_header, send, done)
    finally:
        watcher.cancel()


async def _streamed(
    downstream: HttpDownstream,
    request_id: Any,
    slot: Slot,
    first: bytes,
    id_header: tuple[bytes, bytes],
    send: Send,
    done: Any,
) -> int:
    """The server spoke before it answered: an SSE stream, one event a message, as they come."""
    start = {"type": "http.response.start", "status": 200}
    await send({**start, "headers": [*_SSE_HEADERS, id_header]})
    await send({"type": "http.response.body", "body": _event(first), "more_body": True})
    while True:
        item = await slot.get()
        if item is None:
            downstream.abandon(request_id)
            return 200
        data, final = item
        if final:
            done()
            await send({"type": "http.response.body", "body": _event(data)})
            return 200
        await send({"type": "http.response.body", "body": _event(data), "more_body": True})


def _event(data: bytes) -> bytes:
    """One SSE event of the message (a line break inside becomes more `data:` lines)."""
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return b"event: message\n" + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"event: message\ndata: " + data + b"\n\n"


async def _disconnect(receive: Receive, slot: Slot) -> None:
    """Wake the POST with None when its client goes away before its answer."""
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            slot.put_nowait(None)
            return
