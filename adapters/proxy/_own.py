"""Requests the proxy sends the server itself: a `tools/list` to learn output schemas.

A client may call a tool before it lists tools (the SDK's `ClientSession` lists only after a
call, to validate its result), so the proxy does not know yet whether the tool declares an
output schema, which decides what a valid answer is. Then it asks the server for the listing
itself, before it answers. Its ids are strings of its own (`visiongate-proxy:<random>:<n>`),
so they cannot be taken for a client's; their answers come back here and never reach the
client. Each has a deadline, and every one in flight ends (with no answer) when the server
goes away.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ._jsonrpc import IdKey, encode, id_key

__all__ = ["OwnRequests"]

Send = Callable[[bytes], Awaitable[None]]


class OwnRequests:
    """The proxy's own requests in flight to the server."""

    def __init__(self, send: Send, timeout: float) -> None:
        self._send = send
        self._timeout = timeout
        self._prefix = f"visiongate-proxy:{secrets.token_hex(6)}:"
        self._count = 0
        self._waiting: dict[IdKey, asyncio.Future[Mapping[str, Any] | None]] = {}

    async def request(self, method: str, params: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The server's `result` for `method`, or None when it answered with an error, did
        not answer in time or went away."""
        self._count += 1
        request_id = f"{self._prefix}{self._count}"
        key = id_key(request_id)
        assert key is not None
        answer: asyncio.Future[Mapping[str, Any] | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiting[key] = answer
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
        try:
            await self._send(encode(message))
            body = await asyncio.wait_for(answer, self._timeout)
        except (OSError, ValueError, TimeoutError):
            # Not sent, or no answer in time: the caller goes on without what it asked for.
            return None
        finally:
            self._waiting.pop(key, None)
        result = body.get("result") if body is not None else None
        return result if isinstance(result, Mapping) else None

    def deliver(self, key: IdKey | None, body: Mapping[str, Any]) -> bool:
        """True when `body` answers one of the proxy's own requests (it is taken here)."""
        waiting = self._waiting.pop(key, None) if key is not None else None
        if waiting is None:
            return False
        if not waiting.done():
            waiting.set_result(body)
        return True

    def close(self) -> None:
        """The server went away: every request in flight ends without an answer."""
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result(None)
        self._waiting.clear()
