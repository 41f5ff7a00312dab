"""One session's Streamable HTTP exchanges, spoken by the gateway itself (MCP 2025-06-18).

The SDK's `StreamableHTTPServerTransport` did this before: it cost an import of the SDK's
message models (about a second of CPU before the first session), and per call a task group,
memory streams, an SSE response with tasks of its own, and the client's message and the
answer each validated into those models and dumped again. Here a request's body goes to the
relay as it came (`HttpDownstream`), and what the relay sends comes back as bytes:

- **POST** of a request: answered by `_exchange`: one `application/json` body when the
  answer comes alone, an SSE stream when the server speaks first (progress, sampling);
  a notification or an answer: 202, empty.
- **GET**: the server-to-client stream (`text/event-stream`), one per session (409 for a
  second, as the SDK), with a comment every `PING_S` so proxies keep it open.
- **DELETE**: the session ends (200).

What the transport refused, it refuses in the SDK's words and statuses: 406 when the
`Accept` header lacks what the answer needs, 415 a body that is not `application/json`, 404
a session that ended. The session idles out (`idle_scope` cancelled) after `idle_timeout`
with no request in flight and no GET stream open, the SDK's own rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

import anyio
from starlette.types import Receive, Send

from ..proxy._jsonrpc import INVALID_REQUEST, encode
from ._client import HttpDownstream
from ._exchange import answered, events, json_body, sse_start

__all__ = ["PING_S", "SessionTransport"]

PING_S: Final = 15.0
"""How often an open GET stream gets an SSE comment (sse-starlette's interval, the SDK's)."""


class SessionTransport:
    """The HTTP side of one session; `downstream` is the relay's side of the same."""

    def __init__(self, session_id: str, *, idle_timeout: float, downstream: HttpDownstream):
        self.session_id = session_id
        self.downstream = downstream
        self._idle_timeout = idle_timeout
        self._in_flight = 0
        self.idle_scope = anyio.CancelScope(deadline=anyio.current_time() + idle_timeout)
        self.is_terminated = False

    async def handle(
        self, method: str, headers: Mapping[str, str], message: Any, body: bytes | None,
        receive: Receive, send: Send, done: Any,
    ) -> int:  # fmt: skip
        """Serve one request of the session; the status it was answered with. `done` is
        called just before a request's answer goes out (it stops counting then)."""
        if self.is_terminated or self.idle_scope.cancel_called:
            self.terminate()
            return await _refused(send, 404, "Not Found: Session has been terminated", self)
        self._in_flight += 1
        self.idle_scope.deadline = math.inf
        try:
            return await self._handled(method, headers, message, body, receive, send, done)
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self.idle_scope.deadline = anyio.current_time() + self._idle_timeout

    async def _handled(
        self, method: str, headers: Mapping[str, str], message: Any, body: bytes | None,
        receive: Receive, send: Send, done: Any,
    ) -> int:  # fmt: skip
        json_ok, sse_ok = _accepts(headers.get("accept", ""))
        if method == "GET":
            if not sse_ok:
                text = "Not Acceptable: Client must accept text/event-stream"
                return await _refused(send, 406, text, self)
            return await self._listen(receive, send)
        if method == "DELETE":
            self.terminate()
            await json_body(send, 200, b"", self.session_id)
            return 200
        if not (json_ok and sse_ok):
            text = "Not Acceptable: Client must accept both application/json and text/event-stream"
            return await _refused(send, 406, text, self)
        kind = headers.get("content-type", "").split(";", 1)[0]
        if "application/json" not in (part.strip() for part in kind.split(",")):
            text = "Unsupported Media Type: Content-Type must be application/json"
            return await _refused(send, 415, text, self)
        assert body is not None and isinstance(message, dict)  # read and checked by `_app`
        if "method" in message and message.get("id") is not None:
            slot = self.downstream.request(body, message)
            return await answered(
                slot, message["id"], self.downstream, self.session_id, receive, send, done
            )
        self.downstream.other(body, message)
        await json_body(send, 202, b"", self.session_id)
        return 202

    async def _listen(self, receive: Receive, send: Send) -> int:
        stream = self.downstream.listening()
        if stream is None:
            text = "Conflict: Only one SSE stream is allowed per session"
            return await _refused(send, 409, text, self)
        try:
            await sse_start(send, self.session_id)
            await events(stream, receive, send, ping_s=PING_S)
        finally:
            self.downstream.not_listening()
        return 200

    def terminate(self) -> None:
        """The session is over for its client: every exchange of it ends, later ones 404."""
        self.is_terminated = True
        self.downstream.end()


def _accepts(accept: str) -> tuple[bool, bool]:
    """Whether `Accept` takes JSON, and SSE (wildcards as RFC 7231 reads them)."""
    types = [part.split(";", 1)[0].strip().lower() for part in accept.split(",")]
    wildcard = "*/*" in types
    json_ok = wildcard or "application/json" in types or "application/*" in types
    return json_ok, wildcard or "text/event-stream" in types or "text/*" in types


async def _refused(send: Send, status: int, text: str, transport: SessionTransport) -> int:
    error = {"code": INVALID_REQUEST, "message": text}
    body = encode({"jsonrpc": "2.0", "id": None, "error": error})
    await json_body(send, status, body, transport.session_id)
    return status
