"""How a session's answers are written: one JSON body, or an SSE stream of events.

A request's answer that comes alone is one `application/json` body with its length (MCP's
Streamable HTTP allows either kind for a request; the SDK's client, fastmcp and the Inspector
read both); a request whose server speaks first (progress, sampling, elicitation while the
call runs) gets an SSE stream, each message an event as it comes, the answer last. A client
that goes away mid-call has its answer dropped, as it was on the SDK's transport.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from starlette.types import Receive, Send

from ._client import HttpDownstream, Slot

__all__ = ["answered", "events", "json_body", "sse_start"]

_SESSION: Final = b"mcp-session-id"
_START: Final = "http.response.start"
_BODY: Final = "http.response.body"
_PING: Final = b": ping\n\n"


async def json_body(send: Send, status: int, body: bytes, session_id: str) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (_SESSION, session_id.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": _START, "status": status, "headers": headers})
    await send({"type": _BODY, "body": body})


async def sse_start(send: Send, session_id: str) -> None:
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache, no-transform"),
        (b"x-accel-buffering", b"no"),
        (_SESSION, session_id.encode()),
    ]
    await send({"type": _START, "status": 200, "headers": headers})


async def answered(
    slot: Slot,
    request_id: Any,
    downstream: HttpDownstream,
    session_id: str,
    receive: Receive,
    send: Send,
    done: Any,
) -> int:
    """Wait for what the relay sends for the request and write it; the status. `done` is
    called just before the answer's last byte goes out."""
    watcher = asyncio.ensure_future(_disconnect(receive, slot))
    try:
        item = await slot.get()
        if item is None:
            downstream.abandon(request_id)
            return 499
        data, final = item
        if final:
            done()
            await json_body(send, 200, data, session_id)
            return 200
        await sse_start(send, session_id)
        await send({"type": _BODY, "body": _event(data), "more_body": True})
        while (item := await slot.get()) is not None:
            data, final = item
            if final:
                done()
                await send({"type": _BODY, "body": _event(data)})
                return 200
            await send({"type": _BODY, "body": _event(data), "more_body": True})
        downstream.abandon(request_id)
        await send({"type": _BODY, "body": b""})
        return 200
    finally:
        watcher.cancel()


async def events(stream: Slot, receive: Receive, send: Send, *, ping_s: float) -> None:
    """The GET stream's messages as events until its client goes away or the session ends
    (the headers are sent already)."""
    watcher = asyncio.ensure_future(_disconnect(receive, stream))
    try:
        while True:
            try:
                item = await asyncio.wait_for(stream.get(), ping_s)
            except TimeoutError:
                await send({"type": _BODY, "body": _PING, "more_body": True})
                continue
            if item is None:
                break
            await send({"type": _BODY, "body": _event(item[0]), "more_body": True})
        await send({"type": _BODY, "body": b""})
    finally:
        watcher.cancel()


def _event(data: bytes) -> bytes:
    """One SSE event of the message (a line break inside becomes more `data:` lines)."""
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return b"event: message\n" + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"event: message\ndata: " + data + b"\n\n"


async def _disconnect(receive: Receive, slot: Slot) -> None:
    """Wake the exchange with None when its client goes away first."""
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            slot.put_nowait(None)
            return
