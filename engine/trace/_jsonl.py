"""The JSON Lines trace sink: one `write` of one line per record, rotation that loses nothing.

Several processes may append to one file (agents of a fleet on one host, forked workers). The
file is opened with `O_APPEND` and each record is written with a single `write` call, so the
kernel places every line whole after the previous one: lines are never torn or interleaved
on a local file system (Linux serializes writes to a regular file; NFS does not guarantee
`O_APPEND`).

Rotation across processes takes an advisory lock on a sibling file, `<trace>.lock`. Every
write holds it shared; closing the live file holds it exclusively. Under the shared lock a
writer first checks that its descriptor is still the file at the trace path (same inode)
and reopens it when another process has rotated it. So no record is ever written to a file
after it was closed, and a closed file can be gzipped and pruned with no writer left on it:
rotation loses no records. The lock file also records which time period the live file
belongs to, so a record decided just before a boundary but written after it does not start
another rotation. All processes writing one file must use the same rotation options.
Rotation needs shared locks (`_platform.SHARED_LOCKS`: `fcntl`), so where the system has none
(Windows) a trace file only grows, and asking for rotation is an error.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path
from typing import Any

from visiongate.kernel._platform import SHARED_LOCKS, lock, unlock

from ._encode import encode_line
from ._failures import DeliveryFailures
from ._rotate import Rotation, closed_name, finish, first_record_period


class JsonlTrace:
    """Appends each decision record to a JSON Lines file; see the module docstring.

    With no options the file only grows. `max_bytes` and/or `when` (`S`, `M`, `H`, `D`,
    `midnight`, times `interval`, in UTC) close the live file and start a new one, like the
    standard library's rotating handlers; `compress=True` gzips closed files; `backups` keeps
    only that many closed files. A record that cannot be written (read-only path, full disk)
    is counted in `failures`, logged at most once a minute, and reported in the next record
    that is written; deciding never stops and no lane changes because of it."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int | None = None,
        when: str | None = None,
        interval: int = 1,
        compress: bool = False,
        backups: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.rotation = Rotation(max_bytes, when, interval, compress, backups)
        if self.rotation.active and not SHARED_LOCKS:
            raise ValueError("trace rotation needs POSIX file locks (fcntl); this system has none")
        self.failures = DeliveryFailures(f"`{self.path}`")
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._period: int | None = None
        self._lock_fd: int | None = None
        self._finishing: list[threading.Thread] = []

    def __call__(self, record: dict[str, Any]) -> None:
        if self._pid != os.getpid():
            self._after_fork()
        closed = self.failures.deliver(record, self._write)
        if closed is not None:
            self._finish_later(closed)

    def close(self) -> None:
        """Wait for closed files to be compressed, then close the descriptors."""
        for thread in self._finishing:
            thread.join(timeout=60)
        self._finishing.clear()
        with self._lock:
            for fd in (self._fd, self._lock_fd):
                if fd is not None:
                    os.close(fd)
            self._fd = self._lock_fd = self._identity = None

    # -- writing ----------------------------------------------------------------------------

    def _write(self, record: dict[str, Any]) -> Path | None:
        line = encode_line(record)
        with self._lock:
            return self._append(line)

    def _append(self, line: bytes) -> Path | None:
        """Write one line; the path of the file this write closed, if it rotated one."""
        if not self.rotation.active:
            # Still follow the path: after an outside rotation (logrotate renaming the file)
            # or a deletion, records go to the file at the path, not to a renamed or
            # unlinked one.
            self._follow_path()
            assert self._fd is not None
            _write_whole(self._fd, line)
            return None
        lock_fd = self._lock_file()
        lock(lock_fd, "shared")
        try:
            closed = None
            self._follow_path()
            if self._due(len(line)):
                # Not atomic (flock drops the shared lock first), hence the second check.
                lock(lock_fd, "exclusive")
                self._follow_path()
                if self._due(len(line)):
                    closed = self._rotate(lock_fd)
            assert self._fd is not None
            _write_whole(self._fd, line)
            return closed
        finally:
            unlock(lock_fd)

    def _open_if_needed(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            status = os.fstat(self._fd)
            self._identity = (status.st_dev, status.st_ino)
            self._period = None
        return self._fd

    def _follow_path(self) -> None:
        """Make sure the descriptor is the file now at the path (another process may have
        rotated it): a record is never written into a file that was closed."""
        try:
            status = os.stat(self.path)
            identity: tuple[int, int] | None = (status.st_dev, status.st_ino)
        except FileNotFoundError:
            identity = None
        if self._fd is not None and identity != self._identity:
            os.close(self._fd)
            self._fd = None
        self._open_if_needed()

    def _due(self, size: int) -> bool:
        assert self._fd is not None
        current = os.fstat(self._fd).st_size
        if current == 0:
            return False  # never close an empty file; an oversized record gets its own file
        limit = self.rotation.max_bytes
        if limit is not None and current + size > limit:
            return True
        return self.rotation.when is not None and self._file_period() < self.rotation.period(
            time.time()
        )

    def _file_period(self) -> int:
        if self._period is None:
            self._period = self._recorded_period()
        return self._period

    def _recorded_period(self) -> int:
        """The period of the live file: as the process that opened it wrote in the lock file,
        else that of its first record (a file from before rotation), else the current one."""
        assert self._identity is not None and self._lock_fd is not None
        text = os.pread(self._lock_fd, 100, 0).decode("ascii", "replace").split()
        if len(text) == 3 and text[:2] == [str(self._identity[0]), str(self._identity[1])]:
            return int(text[2])
        found = first_record_period(self.path, self.rotation)
        return self.rotation.period(time.time()) if found is None else found

    def _rotate(self, lock_fd: int) -> Path:
        """Close the live file under the exclusive lock and start a new one."""
        now = time.time()
        closed = closed_name(self.path, now)
        os.rename(self.path, closed)
        assert self._fd is not None
        os.close(self._fd)
        self._fd = None
        self._open_if_needed()
        assert self._identity is not None
        self._period = self.rotation.period(now)
        note = f"{self._identity[0]} {self._identity[1]} {self._period}\n".encode("ascii")
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, note, 0)
        return closed

    def _lock_file(self) -> int:
        if self._lock_fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        return self._lock_fd

    def _finish_later(self, closed: Path) -> None:
        """Compress and prune off the deciding thread: no writer will touch `closed` again."""
        self._finishing = [thread for thread in self._finishing if thread.is_alive()]
        thread = threading.Thread(
            target=finish,
            args=(closed, self.path, self.rotation),
            name="visiongate-trace-rotate",
            daemon=True,
        )
        self._finishing.append(thread)
        thread.start()

    def _after_fork(self) -> None:
        """In a forked child: own descriptors and lock. An inherited lock descriptor would be
        the parent's very lock (flock locks belong to the open file), so it is reopened."""
        self._pid = os.getpid()
        self._lock = threading.Lock()
        for fd in (self._fd, self._lock_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._lock_fd = self._identity = self._period = None
        self._finishing = []


def _write_whole(fd: int, line: bytes) -> None:
    written = os.write(fd, line)
    if written != len(line):
        # A short write (the disk filled mid-record) leaves a fragment: end it with a newline
        # so only this record is lost and the next one starts on a line of its own.
        try:
            os.write(fd, b"\n")
        finally:
            raise OSError(errno.ENOSPC, "the record was cut short")
