"""Session directories a gateway that was killed left behind, found and removed.

A session's image cache directory (`<cache>/sessions/<digest>`) is removed when the session
ends, but a gateway killed with SIGKILL (or by the OOM killer, or a power cut) ends no
session, and the pictures its users' servers returned would stay on disk for good. So each
session holds an exclusive `flock` on `.owner` in its directory while it lives; the kernel
releases it when the process dies, however it dies. When a gateway starts it takes every lock
nobody holds and removes that directory: a directory whose lock is held belongs to a live
session (of this gateway or of another replica sharing the cache), and is left alone.

A directory without `.owner` (from a version before this one, or caught between its `mkdir`
and its lock) is removed only when it has not changed for `UNOWNED_AFTER` seconds. Without
`fcntl` (Windows) a lock cannot be tested, so only those unowned directories are swept.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from visiongate.kernel._platform import try_lock

from .._cache import DIR_MODE, FILE_MODE

__all__ = ["OWNER", "UNOWNED_AFTER", "claim", "release", "sweep"]

OWNER: Final = ".owner"
UNOWNED_AFTER: Final = 3600.0
"""Seconds a session directory without an owner file must be unchanged before it is removed."""

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def claim(directory: Path) -> int:
    """Create `directory` (mode 0700) and hold its owner lock; the open descriptor, to be
    given to `release` once the directory is removed."""
    for _ in range(3):
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        fd = os.open(directory / OWNER, os.O_RDWR | os.O_CREAT | _NOFOLLOW, FILE_MODE)
        try_lock(fd)  # a fresh directory: nobody else holds it
        # A sweep that opened `.owner` between its creation and the lock may have removed it:
        # then the lock guards nothing, so the directory is made again.
        with contextlib.suppress(OSError):
            if os.stat(directory / OWNER, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return fd
        os.close(fd)
    raise OSError(f"the session directory `{directory}` keeps disappearing")


def release(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)  # the lock ends with the descriptor


def sweep(root: Path, *, clock: Callable[[], float] = time.time) -> int:
    """Remove the session directories under `root / "sessions"` that no live process owns;
    how many were removed."""
    sessions = root / "sessions"
    try:
        entries = list(os.scandir(sessions))
    except OSError:
        return 0  # no sessions yet, or nothing we may read
    removed = 0
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and _abandoned(Path(entry.path), clock):
            removed += 1
    return removed


def _abandoned(directory: Path, clock: Callable[[], float]) -> bool:
    """Whether `directory` was left by a dead session; removed if so."""
    try:
        fd = os.open(directory / OWNER, os.O_RDONLY | _NOFOLLOW)
    except FileNotFoundError:
        try:
            info = directory.lstat()
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode) or clock() - info.st_mtime < UNOWNED_AFTER:
            return False
        shutil.rmtree(directory, ignore_errors=True)
        return not directory.exists()
    except OSError:
        return False  # a link or something else at `.owner`: not ours to judge
    try:
        if not try_lock(fd):
            return False  # a live session holds it
        shutil.rmtree(directory, ignore_errors=True)  # under the lock: nobody can claim it
        return not directory.exists()
    finally:
        os.close(fd)
