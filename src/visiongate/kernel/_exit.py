"""Leaving a process without the interpreter's teardown, once its work is done.

At exit Python frees every module and object one by one. For a process that imported the MCP
SDK that is about 260 ms of CPU here (over a quarter of `import mcp` and its exit: the SDK's
pydantic models), and 60 to 90 ms of a proxy's. Once the command has returned, the
threads are joined and every `atexit` handler has run, the only things left to write are the
standard streams' buffers: they are flushed, and the process ends with `os._exit`.

`skip_teardown()` is called first thing in a process (after `_noted`'s signal handlers, which
register none), so that its handler is registered before any module's and runs after all of
them; `returned(code)` says the work is done. Python's own
finalization runs as before when nothing returned (an exception, `sys.exit` from deeper
down), when a standard stream cannot be flushed (Python then reports it and exits 120, as
always) and in development mode (`-X dev`), whose resource warnings come from the teardown.
"""

from __future__ import annotations

import atexit
import os
import sys

__all__ = ["returned", "skip_teardown"]

_codes: list[int] = []


def skip_teardown() -> None:
    """Register the exit without teardown: call it before anything else is imported."""
    atexit.register(_leave)


def returned(code: int) -> None:
    """The process's work is done, with this exit code."""
    _codes.append(code)


def _leave() -> None:
    if not _codes or sys.flags.dev_mode:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # Python's own exit reports it, as before
            return
    os._exit(_codes[-1])
