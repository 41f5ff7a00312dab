"""Standard output for one command: a reader that goes away ends it quietly, a closed one is
an error.

- `visiongate explain | head -1`: once `head` exits, the next write raises `BrokenPipeError`.
  The command does not care: it finishes, its exit code stays what its work says (a
  `lint | head -1` in a pipeline with `pipefail` still fails on findings), and nothing is
  printed about the pipe. Standard output is then pointed at /dev/null, so that Python's own
  flush at exit does not report the pipe again (the recipe of the `signal` documentation).
- `visiongate explain >&-` or `> /dev/full`: the output is not delivered, so the first write
  that fails (or the last flush) ends the command: one line on standard error and exit 2,
  never a traceback, and never 1, which would read as "findings".
"""

from __future__ import annotations

import io
import os
import sys

from visiongate.kernel._errors import VisiongateError

TYPE_CHECKING = False  # not `typing`'s: every command imports this module (issue 37)
if TYPE_CHECKING:
    from types import TracebackType
    from typing import TextIO


class StdoutError(VisiongateError):
    """Standard output cannot take the output: closed before the command started, or a write
    failed (a full disk). Not an `OSError`, so no command mistakes it for a bad input file."""


class _GuardedStdout(io.TextIOBase):
    """A text stream over the real standard output that absorbs a broken pipe."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if self._stream is None:
            raise StdoutError("cannot write the output: standard output is closed")
        if not self.broken:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._reader_gone()
            except OSError as error:
                raise self._failed(error) from None
        return len(text)

    def flush(self) -> None:
        # Closed under us (a test's capture, at the guard's finalization, which Python 3.13
        # reports): nothing left to flush.
        if self._stream is not None and not self.broken and not self._stream.closed:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_gone()
            except OSError as error:
                raise self._failed(error) from None

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase declares it read-only
        return getattr(self._stream, "encoding", None) or "utf-8"

    def _failed(self, error: OSError) -> StdoutError:
        """A write that failed (`ENOSPC`): what is still buffered goes nowhere, so Python's
        flush at exit does not fail again."""
        from visiongate.cli._common import reason

        self._reader_gone()
        return StdoutError(f"cannot write the output: {reason(error)}")

    def _reader_gone(self) -> None:
        self.broken = True
        try:
            descriptor = self._stream.fileno() if self._stream is not None else -1
        except (OSError, ValueError):
            return  # not a real file (a capture in tests): nothing to redirect
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, descriptor)
        finally:
            os.close(devnull)


class guarded_stdout:  # lower case: used as a context manager, named like one
    """Run a command with `sys.stdout` guarded; a closed or full stdout turns into exit 2.

    A class rather than `contextlib.contextmanager`: `visiongate --help` goes through here,
    and contextlib and dataclasses would add to every call's start-up time."""

    def __init__(self) -> None:
        self.code = 0
        self._original = sys.stdout
        self._guard = _GuardedStdout(self._original)

    def __enter__(self) -> guarded_stdout:
        sys.stdout = self._guard  # a TextIOBase: print() needs only write() and flush()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        try:
            if error is None:
                self._guard.flush()
        except StdoutError as failed:
            error = failed
        finally:
            sys.stdout = self._original
        if isinstance(error, StdoutError):
            if sys.stderr is not None:
                print(f"visiongate: error: {error}", file=sys.stderr)
            self.code = 2
            return True
        return False
