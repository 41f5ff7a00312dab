"""What differs between operating systems, in one place: locks between processes, reading a
child process's answers with a deadline, starting a child outside the terminal's signals,
forking, file ownership. The engine and the adapters both use it (it imports only the
standard library); the MCP servers' process groups are `adapters/mcp`'s own.

Each part takes the POSIX way where the system has it and a portable fallback elsewhere
(Windows), chosen by what the running Python offers, never by the platform's name:

- `exclusive(path)`: `fcntl.flock` on the lock file; without `fcntl`, the lock is the
  existence of `<path>.owner`, created with `O_CREAT | O_EXCL` (atomic on every file system
  Python supports) and removed on release. An owner file older than `STALE_AFTER` is left by
  a process that died holding it and is taken over. `SHARED_LOCKS` says whether shared locks
  exist too (only `fcntl` has them; the trace's rotation across processes needs them).
- `PipeLines`: `select()` on the pipe where it takes pipes (POSIX); a reader thread where it
  takes sockets only (Windows, which also has no `poll()`).
- `NEW_PROCESS_GROUP`: `start_new_session` where `setsid` exists, else Windows'
  `CREATE_NEW_PROCESS_GROUP`: Ctrl-C in the terminal reaches the parent only, which then
  stops the child itself.
- `try_lock(fd)`: `flock` without waiting, to tell a live owner from a dead one (a lock
  ends with its process, even a SIGKILLed one); without `fcntl` it answers "held".
- `can_fork()`: whether worker processes can be forked (`audit --jobs` reads in one
  process where they cannot: the same result, only slower).
- `owned_by_this_user(info)`: a file's owner is this process's user, where files have uids;
  on Windows (no `os.getuid`) the per-user profile directories stand in, so it is true.

`tests/test_platform.py` runs the core with `fcntl`, `termios`, `resource`, `select.poll`,
`select()` on pipes and the POSIX-only `os` functions hidden, so the fallbacks are the ones
taken there.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final, Literal

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "NEW_PROCESS_GROUP",
    "SHARED_LOCKS",
    "STALE_AFTER",
    "PipeLines",
    "can_fork",
    "exclusive",
    "lock",
    "owned_by_this_user",
    "try_lock",
    "unlock",
]

SHARED_LOCKS: Final = fcntl is not None
"""Whether shared and exclusive advisory locks on an open file exist (`fcntl.flock`)."""

STALE_AFTER: Final = 30.0
"""Seconds after which a fallback lock's owner file counts as left by a dead process (what
the engine does under a lock takes milliseconds)."""
_WAIT: Final = 10.0
_PAUSE: Final = 0.01


def _new_process_group() -> dict[str, Any]:
    if hasattr(os, "setsid"):
        return {"start_new_session": True}
    import subprocess  # only here: a warm `decide` imports this module and starts no process

    return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}


NEW_PROCESS_GROUP: Final[dict[str, Any]] = _new_process_group()
"""`subprocess.Popen` keywords that keep a child out of the terminal's Ctrl-C."""


def can_fork() -> bool:
    """Whether this system forks processes (not Windows)."""
    return hasattr(os, "fork")


def owned_by_this_user(info: os.stat_result) -> bool:
    """Whether `info` (a `stat` result) belongs to this process's user; true without uids."""
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def lock(fd: int, mode: Literal["shared", "exclusive"]) -> None:
    """Take an advisory lock on an open file, waiting for it; only where `SHARED_LOCKS`."""
    if fcntl is None:
        raise OSError("shared file locks need fcntl, which this system lacks")
    fcntl.flock(fd, fcntl.LOCK_SH if mode == "shared" else fcntl.LOCK_EX)


def try_lock(fd: int) -> bool:
    """Take an exclusive advisory lock on an open file if no other open file holds one;
    whether it was taken. Without `SHARED_LOCKS` nothing can be told, so False (held)."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock(fd: int) -> None:
    if fcntl is None:
        raise OSError("shared file locks need fcntl, which this system lacks")
    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock between processes on `path` (a lock file, created if missing)."""
    if fcntl is not None:
        with open(path, "a+b") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            yield  # closing the file releases the lock
        return
    owner = path.with_name(path.name + ".owner")
    _take(owner)
    try:
        yield
    finally:
        owner.unlink(missing_ok=True)


def _take(owner: Path) -> None:
    deadline = time.monotonic() + _WAIT
    while True:
        try:
            fd = os.open(owner, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if _stale(owner):
                owner.unlink(missing_ok=True)
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(f"another process holds the lock `{owner}`") from None
            time.sleep(_PAUSE)
            continue
        with os.fdopen(fd, "w", encoding="ascii") as stream:
            stream.write(f"{os.getpid()}\n")
        return


def _stale(owner: Path) -> bool:
    try:
        return time.time() - owner.stat().st_mtime > STALE_AFTER
    except FileNotFoundError:
        return False  # released meanwhile: the next attempt takes it


class PipeLines:
    """Answer lines from a child's standard output, each awaited at most `timeout` seconds."""

    def __init__(self, stream: IO[bytes], *, threaded: bool | None = None) -> None:
        self._stream = stream
        self.threaded = not hasattr(select, "poll") if threaded is None else threaded
        self._lines: queue.Queue[bytes] = queue.Queue()
        if self.threaded:
            name = "visiongate-pipe-reader"
            threading.Thread(target=self._pump, name=name, daemon=True).start()

    def read_line(self, timeout: float) -> bytes:
        """The next line, newline included; b"" once the child closed its end (it exited).
        Raises `TimeoutError` when nothing complete arrives within `timeout`."""
        if self.threaded:
            try:
                return self._lines.get(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"no answer within {timeout:g} s") from None
        return self._selected(timeout)

    def _selected(self, timeout: float) -> bytes:
        descriptor = self._stream.fileno()
        chunks: list[bytes] = []
        while not chunks or not chunks[-1].endswith(b"\n"):
            ready, _, _ = select.select([descriptor], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no answer within {timeout:g} s")
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return b""
            chunks.append(chunk)
        return b"".join(chunks)

    def _pump(self) -> None:
        with contextlib.suppress(OSError, ValueError):  # closed under us: the child is gone
            for line in iter(self._stream.readline, b""):
                if not line.endswith(b"\n"):
                    break  # cut off by the child's exit: no answer, as with select()
                self._lines.put(line)
        self._lines.put(b"")
