"""Test servers still running when a test session ends (issue 36, item 3).

The full suite once left a server that ignores end of input behind, and nothing said so. Every
test process (each xdist worker) puts a token of its own in its environment before the first
test runs; everything it starts inherits it (the proxy hands its environment to the server,
and the server to its children), so at the end the process table says which live processes
came from this session, whoever their parent is now (a server whose proxy was killed is
adopted by init). Those whose command line names a test server (`tests/_*.py`, the npm
servers under `tests/npm/`) are leftovers: reported, then killed. One pass over `/proc`, a
few milliseconds; on a system without it there is nothing to scan and nothing is reported.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Final

VARIABLE: Final = "VISIONGATE_TEST_RUN"
MARKERS: Final = (b"/tests/_", b"/tests/npm/")
"""What the command line of a test server holds: its script, or the npm package it runs."""


def mark_this_process() -> str:
    """Give this process (and so everything it starts from now on) a token of its own."""
    token = f"{os.getpid()}-{secrets.token_hex(6)}"
    os.environ[VARIABLE] = token
    return token


def left_running(token: str) -> dict[int, str]:
    """Live test servers started under `token`: pid -> command line."""
    wanted = f"{VARIABLE}={token}".encode()
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/environ").exists() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if wanted not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            command = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):  # gone meanwhile, or not ours to read
            continue
        if state != "Z" and any(marker in command for marker in MARKERS):
            found[int(entry.name)] = command.replace(b"\0", b" ").decode(errors="replace")
    return found


def stop_leftovers(token: str, grace: float = 5.0) -> dict[int, str]:
    """The test servers of `token` still running after `grace` seconds (what is being stopped
    as the session ends gets that long), each killed before this returns."""
    deadline = time.monotonic() + grace
    while (found := left_running(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in found:
        with contextlib.suppress(OSError):  # it ended by itself meanwhile
            os.kill(pid, signal.SIGKILL)
    return found
