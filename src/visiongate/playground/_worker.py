"""The playground's worker: a child process that lints, lays out, tests and routes, so that a
policy that takes too long is cut off by ending the process, and the server keeps answering.

This is the server's side (`Worker`): one request at a time, each with a deadline; past it
the child is killed, a fresh one started, and the caller told (`WorkerTimeout`). The child
is `_child`, which says `ready` once it has imported what it needs, so its start is not
counted against the first request's deadline.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._platform import NEW_PROCESS_GROUP

STARTUP_SECONDS: Final = 60.0
"""How long a fresh worker may take to import the engine (a loaded machine is slow)."""


class WorkerTimeout(VisiongateError):
    """The worker did not answer in time: it was stopped and a fresh one started."""


class Worker:
    """The server's handle on the worker process."""

    def __init__(self, policy_path: Path | None, lint: Mapping[str, Any] | None = None) -> None:
        """`lint`: the project's `severity` and `fail_level`, as `lint` applies them."""
        self._arguments = [str(policy_path or ""), json.dumps(dict(lint or {}))]
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._closed = False
        self.restarts = 0

    def _start(self) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "visiongate.playground._child", *self._arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            # Ctrl-C in the terminal reaches the server only, which then stops the worker by
            # closing its input (the worker ends by itself, too, if the server dies).
            **NEW_PROCESS_GROUP,
        )
        answers: queue.Queue[str | None] = queue.Queue()
        assert process.stdout is not None
        threading.Thread(target=_pump, args=(process.stdout, answers), daemon=True).start()
        try:
            ready = answers.get(timeout=STARTUP_SECONDS)
        except queue.Empty:
            ready = None
        if ready is None:
            self._stop(process)
            raise WorkerTimeout("the worker did not start; see the server's standard error")
        self._process, self._answers = process, answers
        return process

    def call(self, request: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        """The worker's answer; `WorkerTimeout` past `timeout` seconds (the worker is then
        replaced). One request at a time: the page sends the latest text only."""
        with self._lock:
            if self._closed:
                raise WorkerTimeout("was not run: the playground is stopping")
            process = self._process if self._process and self._process.poll() is None else None
            process = process or self._start()
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                line = self._answers.get(timeout=timeout)
            except queue.Empty:
                self._stop(process)
                raise WorkerTimeout(f"took longer than {timeout:g} s and was cut off") from None
            except OSError:
                line = None
            if line is None:
                self._stop(process)
                raise WorkerTimeout("the worker ended; a fresh one answers the next request")
            answer: dict[str, Any] = json.loads(line)
            return answer

    def _stop(self, process: subprocess.Popen[str]) -> None:
        process.kill()
        process.wait(10)
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # the pipe to a killed process may be broken
                process.stdin.close()
        self.restarts += 1
        self._process = None

    def warm(self) -> None:
        """Start the worker now, so that the page's first request does not wait for it."""
        with self._lock:
            if self._process is None and not self._closed:
                self._start()

    def close(self) -> None:
        """Stop the worker; later requests are refused (the server is stopping)."""
        with self._lock:
            process, self._process, self._closed = self._process, None, True
        if process is not None and process.poll() is None:
            assert process.stdin is not None
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def _pump(stream: IO[str], answers: queue.Queue[str | None]) -> None:
    """Hand the worker's answer lines over; None once it ends (the stream is then closed)."""
    with stream:
        for line in stream:
            answers.put(line)
    answers.put(None)
