"""Run a coroutine so that Ctrl-C and SIGTERM stop it cleanly, child processes included.

asyncio's own Ctrl-C handling cancels the main task natively, and SIGTERM kills the process
at once: a server started in its own session (as MCP servers are) would be left running. Here
both signals cancel an anyio scope around the work instead, so every `finally` and shielded
clean-up runs (the MCP transport stops its server), and the command then exits with the
conventional status (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from visiongate._errors import VisiongateError

__all__ = ["Interrupted", "run_until_signal"]

T = TypeVar("T")
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(VisiongateError):
    """The work was stopped by a signal; `exit_code` is 128 plus its number."""

    def __init__(self, signum: int) -> None:
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {self.name}")


def run_until_signal(work: Callable[[], Awaitable[T]]) -> T:
    """`asyncio.run(work())`, raising `Interrupted` once SIGINT or SIGTERM stopped it."""
    return asyncio.run(_guarded(work))


async def _guarded(work: Callable[[], Awaitable[T]]) -> T:
    loop = asyncio.get_running_loop()
    received: list[int] = []
    with anyio.CancelScope() as scope:

        def stop(signum: int) -> None:
            received.append(signum)
            scope.cancel()

        installed = _install(loop, stop)
        try:
            return await work()
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
    raise Interrupted(received[0] if received else signal.SIGINT)


def _install(loop: asyncio.AbstractEventLoop, stop: Callable[[int], None]) -> list[int]:
    installed: list[int] = []
    for signum in _SIGNALS:
        try:
            loop.add_signal_handler(signum, stop, signum)
        except (NotImplementedError, RuntimeError, ValueError):
            # Windows' loop has no signal handlers, and only the main thread may install
            # them: Ctrl-C then falls back to asyncio's default handling.
            continue
        installed.append(signum)
    return installed
