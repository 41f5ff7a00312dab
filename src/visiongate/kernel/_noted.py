"""SIGINT and SIGTERM noted instead of acted on, from the first line of a command that starts
servers until it is ready to act on them.

Python's own SIGINT handler raises `KeyboardInterrupt` wherever the main thread is. Raised
inside a callback Python runs for itself (an import lock's, a finalizer), it is printed as
"Exception ignored" and lost, and the command runs on: a proxy in front of its server,
after the Ctrl-C. (A proxy once ran on after a Ctrl-C in its first 0.1 s, in 1 of 466 such
starts on a loaded machine; that cause was not proven, this is the path known to lose one.)
`_entry` calls `note_signals` before it loads the command line, for `proxy` and `mcp`; the
command's signal handling (`visiongate.cli._signals`) shares `NOTED` and acts on it.
"""

from __future__ import annotations

import signal

__all__ = ["NOTED", "interruption_in", "note", "note_signals"]

NOTED: list[int] = []
"""Signals that arrived while they were noted, oldest first."""


def note(signum: int, frame: object) -> None:
    """The handler: remember the signal, do nothing else."""
    NOTED.append(signum)


def note_signals() -> None:
    """Note SIGINT and SIGTERM from now on, less one this process was started with ignored (a
    background job's SIGINT stays ignored, as `visiongate.cli._signals` reads it)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, note)


def interruption_in(error: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or signal made one) that `error` is, was raised from, or was raised while
    handling; None when there is none. Python 3.11 wraps what a `__set_name__` raises in
    `RuntimeError("Error calling __set_name__ ...")`, so a signal that lands while a dataclass
    is made (at import) came out as that, with a traceback and exit 1 (`test_proxy_signals`,
    once in `.ci/run`); 3.12 lets it through as it is."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None
