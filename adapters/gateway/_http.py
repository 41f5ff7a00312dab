"""uvicorn's h11 protocol with a deadline for each request's head.

uvicorn closes a connection that idles between requests (its keep-alive timeout) but waits
for ever on one that has begun a request and not finished its request line and headers. A
peer that opens thousands of such connections (slowloris) holds a file descriptor each,
before any token is checked, until the gateway can accept no one. Here every connection must
deliver a complete request head within `--read-timeout` of connecting, or of its previous
response; otherwise it is closed. The body's own deadline is the application's
(`_body.read_body`, under `_app`), which answers 408.

This subclasses `uvicorn.protocols.http.h11_impl.H11Protocol`, which is not uvicorn's public
API: it uses its `conn` (the h11 connection), `loop` and `transport`, and overrides
`connection_made`, `data_received`, `connection_lost` and `on_response_complete`, the hook
uvicorn calls after each response. A uvicorn that renamed one would not fail, only stop the
deadline, so the `gateway` extra pins the minor these tests ran on, `missing_hooks` checks a
real instance at start-up (the gateway then refuses `--read-timeout` and says why, and without
it serves on uvicorn's own protocol, saying the head deadline is off), and `.ci/run` runs the
gateway's security tests on uvicorn's newest release too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["head_deadlined", "missing_hooks"]


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


_OVERRIDDEN: Final = ("connection_made", "data_received", "connection_lost", "on_response_complete")


def missing_hooks(protocol: type[asyncio.Protocol] = H11Protocol) -> list[str]:
    """What `_HeadDeadlined` relies on that this uvicorn's `protocol` lacks, by name (empty:
    everything is there): the methods it overrides, uvicorn calling `on_response_complete`
    after a response, and an instance's `conn` (an h11 connection), `loop` and `transport`."""
    missing = [name for name in _OVERRIDDEN if not callable(getattr(protocol, name, None))]
    handle = getattr(protocol, "handle_events", None)
    names = getattr(getattr(handle, "__code__", None), "co_names", ())
    if "on_response_complete" not in names:
        missing.append("on_response_complete called by handle_events")
    made = getattr(getattr(protocol, "connection_made", None), "__code__", None)
    if "transport" not in getattr(made, "co_names", ()):
        missing.append("transport")
    return missing + _instance_missing(protocol)


def _instance_missing(protocol: type[asyncio.Protocol]) -> list[str]:
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    loop = asyncio.new_event_loop()
    try:
        config = Config(_no_app, lifespan="off", ws="none", log_level="warning")
        made = protocol(config=config, server_state=ServerState(), app_state={}, _loop=loop)  # type: ignore[call-arg]
    except Exception as error:  # any change of the constructor is a change of the hooks
        return [f"the constructor ({type(error).__name__})"]
    finally:
        loop.close()
    found = [] if isinstance(getattr(made, "conn", None), h11.Connection) else ["conn"]
    return found + ([] if getattr(made, "loop", None) is loop else ["loop"])


async def _no_app(scope: Any, receive: Any, send: Any) -> None:
    """The application of the throwaway instance `missing_hooks` builds; never called."""


def head_deadlined(seconds: float, on_late: Callable[[], None]) -> type[H11Protocol]:
    """The protocol class for `uvicorn.Config(http=...)`, with this deadline for a head;
    `on_late` is called for each connection closed by it, but for one idle after an answer
    (uvicorn's keep-alive timeout would close that one too)."""
    fields = {"head_timeout": seconds, "on_late": staticmethod(on_late)}
    return type("HeadDeadlinedH11", (_HeadDeadlined,), fields)
