"""Run a coroutine so that Ctrl-C and SIGTERM stop it cleanly, child processes included.

asyncio's own Ctrl-C handling cancels the main task natively, and SIGTERM kills the process
at once: a server started in its own session (as MCP servers are) would be left running. Here
both signals cancel an anyio scope around the work instead, so every `finally` and shielded
clean-up runs (the MCP transport stops its server), and the command then exits with the
conventional status (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._noted import NOTED, interruption_in, note, note_signals

# Not `typing.TYPE_CHECKING`: `mcp --help` imports this module, and `typing` costs it a few
# milliseconds (issue 37).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable, Iterable, Iterator
    from typing import Any, TypeVar

    T = TypeVar("T")

# asyncio and anyio are imported when the loop starts, not with this module: `proxy` starts
# its server before it imports them (see `adapters.proxy._serve`).

__all__ = ["Interrupted", "defer_signals", "run_until_signal", "signals_held", "signals_raise"]

_SIGNALS = tuple(
    signum
    for signum in (signal.SIGINT, signal.SIGTERM)
    if signal.getsignal(signum) is not signal.SIG_IGN
)
"""The signals acted on: SIGINT and SIGTERM, less one this process was started with ignored.
A shell starts a background job (`cmd &`) with SIGINT ignored so a Ctrl-C at the terminal
leaves it alone; the kernel drops such a signal, so taking it over later would honour a
Ctrl-C 100 ms in and not one at 10 ms. Read when the module is first imported, before any
handler here is installed (Python leaves an ignored SIGINT ignored at start-up)."""


class Interrupted(VisiongateError):
    """The work was stopped by a signal; `exit_code` is 128 plus its number."""

    def __init__(self, signum: int) -> None:
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {self.name}")


class _Signalled(KeyboardInterrupt):
    """What `signals_raise`'s handler raises where the main thread is: a KeyboardInterrupt,
    which the `except Exception:` of a library (or of our own fallbacks) lets through and
    asyncio's callbacks re-raise, where an `Exception` would be swallowed and the signal
    lost. `signals_raise` turns it into `Interrupted` at its edge."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signum)


def defer_signals() -> None:
    """From now on, note SIGINT and SIGTERM instead of acting on them, until `signals_raise`
    or `run_until_signal` takes over and acts on what was noted. For the commands that start
    servers: a KeyboardInterrupt raised while a library is being imported can be swallowed by
    its `except:` and lost (a Ctrl-C 0.3 s into `mcp call` was), and the command then ran on."""
    if threading.current_thread() is threading.main_thread():
        note_signals()  # what `_entry` did already for `proxy` and `mcp` started as commands


def _raise_noted() -> None:
    if NOTED:
        raise Interrupted(NOTED.pop(0))


@contextmanager
def signals_raise() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` where the main thread is, for the synchronous
    parts of a command (loading the policy while the server starts, say): a `finally` then
    stops what was started, and the command ends with one line, not a traceback. Inside,
    `run_until_signal` hands the signals to the event loop and back."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_it(signum: int, frame: Any) -> None:
        # Noted too: where the exception lands Python may swallow it (an importlib callback's
        # "Exception ignored in"), and the proxy then ran on; the next checkpoint (the loop's
        # start, `_raise_noted`) acts on the note. Or a library may turn it into an error of
        # its own with no chain back to it: pydantic-core's `SchemaError("Error building
        # \"literal\" validator: _Signalled: 2")`, a Ctrl-C 1 s into `mcp call` as the SDK's
        # models were built, gave a traceback and exit 1; the note says it was the signal.
        NOTED.append(signum)
        raise _Signalled(signum)

    previous = {signum: signal.signal(signum, raise_it) for signum in _SIGNALS}
    unraisable = sys.unraisablehook

    def quiet(report: Any) -> None:
        # Swallowed where it landed and noted (above): acted on at the next checkpoint, so
        # Python's "Exception ignored in: ... _Signalled" traceback would say what did not
        # happen (one Ctrl-C in 800 landed in an import lock's callback).
        if not isinstance(report.exc_value, _Signalled):
            unraisable(report)

    sys.unraisablehook = quiet
    try:
        _raise_noted()
        yield
    # Ours, a Ctrl-C before the handler was in place, or either wrapped by Python or a
    # library; or an error raised after a signal that came here: the signal is what happened.
    except (KeyboardInterrupt, Exception) as error:
        stopped = interruption_in(error)
        if isinstance(error, Interrupted) or (stopped is None and not NOTED):
            raise
        signum = getattr(stopped, "signum", NOTED[0] if NOTED else signal.SIGINT)
        NOTED.clear()  # acted on here
        raise Interrupted(signum) from None
    finally:
        sys.unraisablehook = unraisable
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def signals_held() -> Iterator[None]:
    """Inside `signals_raise`, around the few lines that start a server and keep hold of it:
    SIGINT and SIGTERM are noted, and one noted is raised on the way out, once the server is
    in hand (`started = start_server(...)` has completed), so the `finally` that stops it has
    it. Raised inside `subprocess.Popen`, a Ctrl-C left a server running that nothing knew
    of (issue 36)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, note) for signum in _SIGNALS}
    try:
        yield
    finally:
        _restore(previous.items())
    if NOTED:
        signal.raise_signal(NOTED.pop(0))  # handled as outside: `signals_raise` raises


def run_until_signal(work: Callable[[], Awaitable[T]]) -> T:
    """`asyncio.run(work())`, raising `Interrupted` once SIGINT or SIGTERM stopped it.

    While the loop starts and stops, around the moments its own handlers are in place, a
    signal is noted rather than raised (an exception raised inside the loop's machinery can
    be lost): the loop acts on one noted before its handlers, and one noted after them is
    raised once the loop is gone."""
    import asyncio

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(_guarded(work))
    previous = {signum: signal.signal(signum, note) for signum in _SIGNALS}
    try:
        result = asyncio.run(_guarded(work))
    finally:
        _restore(previous.items())
    _raise_noted()
    return result


async def _guarded(work: Callable[[], Awaitable[T]]) -> T:
    import asyncio

    import anyio

    loop = asyncio.get_running_loop()
    received: list[int] = []
    saved: dict[int, Any] = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    with anyio.CancelScope() as scope:

        def stop(signum: int) -> None:
            received.append(signum)
            scope.cancel()

        installed = _install(loop, stop)
        try:
            _raise_noted()  # one that came while the loop was starting
            return await work()
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
            # asyncio leaves the default disposition behind; put back what was there
            # (`run_until_signal`'s noting handler), so a signal after the loop is still caught.
            _restore((signum, saved[signum]) for signum in installed)
    raise Interrupted(received[0] if received else signal.SIGINT)


def _restore(handlers: Iterable[tuple[int, Any]]) -> None:
    """Put these Python-level handlers back (one that is not Python's, `None`, is left)."""
    for signum, handler in handlers:
        if callable(handler) or handler in (signal.SIG_IGN, signal.SIG_DFL):
            signal.signal(signum, handler)


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
