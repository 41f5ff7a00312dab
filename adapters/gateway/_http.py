"""uvicorn's h11 protocol with a deadline for each request's head.

uvicorn closes a connection that idles between requests (its keep-alive timeout) but waits
for ever on one that has begun a request and not finished its request line and headers. A
peer that opens thousands of such connections (slowloris) holds a file descriptor each,
before any token is checked, until the gateway can accept no one. Here every connection must
deliver a complete request head within `--read-timeout` of connecting, or of its previous
response; otherwise it is closed. The body's own deadline is the application's
(`_app._read_body`), which answers 408.

This subclasses `uvicorn.protocols.http.h11_impl.H11Protocol` and uses its `conn` (the h11
connection), `loop` and `transport`; `tests/test_gateway_security.py` runs it (slow heads
and bodies) on the uvicorn the `gateway` extra pins, as every gateway test does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["head_deadlined"]


class _HeadDeadlined(H11Protocol):
    head_timeout: float = 30.0
    on_late: Callable[[], None] = staticmethod(lambda: None)
    _head_timer: asyncio.TimerHandle | None = None
    _idle_between: bool = False
    """Armed after a response: a connection that sends nothing more is merely idle."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm(idle_between=False)

    def data_received(self, data: bytes) -> None:
        self._idle_between = False  # a next request has begun
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm(idle_between=True)  # the next request's head has the same time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, *, idle_between: bool) -> None:
        self._disarm()
        self._idle_between = idle_between
        if not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()  # no complete head in time: nothing was started to answer
            if not self._idle_between:
                self.on_late()  # counted: a head begun and not finished, or never begun


def head_deadlined(seconds: float, on_late: Callable[[], None]) -> type[H11Protocol]:
    """The protocol class for `uvicorn.Config(http=...)`, with this deadline for a head;
    `on_late` is called for each connection closed by it, but for one idle after an answer
    (uvicorn's keep-alive timeout would close that one too)."""
    fields = {"head_timeout": seconds, "on_late": staticmethod(on_late)}
    return type("HeadDeadlinedH11", (_HeadDeadlined,), fields)
