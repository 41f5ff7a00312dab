"""Reading a file named from outside (a command's argument, a path a trace or a config records):
only a regular file, under a cap, never blocking.

A FIFO at the path would wait for a writer for ever, `/dev/zero` would never end, a directory
gives a bare `[Errno 21]`, and a 2 GB file read whole before its size is checked costs its size
in memory. `read_regular_file` looks before it opens, opens with `O_NONBLOCK`, looks again at
what it opened (the path may have been swapped between), refuses a file over the cap by its size
and reads at most the cap plus one byte. Every refusal is an `OSError` whose `strerror` says why
in one short line (`not a regular file (a FIFO)`, `larger than 8,388,608 bytes (9,000,000)`),
for the caller to put in its own located message. `open_regular_file` is the same for a
reader that streams a file of any size in bounded pieces (a trace), with no cap on the whole.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO, Final

__all__ = ["check_regular", "open_regular_file", "read_regular_file"]

_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)  # not on Windows, which has no FIFOs to fear
_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)
_PIECE: Final = 1 << 20


def read_regular_file(path: str | Path, max_bytes: int, *, whole: bool = True) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them; `OSError` with a
    `strerror` that says why otherwise (missing, not a regular file, too large). With
    `whole=False` a larger file is not refused: its first `max_bytes` come back, for a caller
    that says itself how it is too large."""
    check_regular(os.stat(path), path)
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK)
    try:
        status = os.fstat(descriptor)
        check_regular(status, path)  # replaced between the two looks
        if whole and status.st_size > max_bytes:
            raise OSError(0, f"larger than {max_bytes:,} bytes ({status.st_size:,})", str(path))
        pieces: list[bytes] = []
        left = max_bytes + 1 if whole else max_bytes
        while left > 0 and (piece := os.read(descriptor, min(left, _PIECE))):
            pieces.append(piece)
            left -= len(piece)
    finally:
        os.close(descriptor)
    data = b"".join(pieces)
    if whole and len(data) > max_bytes:  # it grew while being read
        raise OSError(0, f"larger than {max_bytes:,} bytes", str(path))
    return data


def open_regular_file(path: str | Path) -> BinaryIO:
    """The regular file at `path`, open for reading in binary (buffered), looked at before
    and after it is opened without blocking; `OSError` as `read_regular_file` raises it
    otherwise. For a reader that streams it in pieces: nothing here bounds its size."""
    check_regular(os.stat(path), path)
    descriptor = os.open(path, os.O_RDONLY | _NONBLOCK)
    try:
        check_regular(os.fstat(descriptor), path)  # replaced between the two looks
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def check_regular(status: os.stat_result, path: str | Path) -> None:
    """`OSError` naming the kind of file at `path` unless `status` is a regular file's."""
    if stat.S_ISREG(status.st_mode):
        return
    kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")
    raise OSError(0, f"not a regular file ({kind})", str(path))
