"""What a trace sink does when it cannot deliver a record: count it, say so, keep deciding.

A full disk or a read-only trace path must never stop the gate nor change a lane: the sink
counts the record as lost, logs the failure at most once a minute (a busy agent would otherwise
log on every decision), and the next record that does get through carries a `trace_errors`
field saying how many were lost, since when, and why.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from ._encode import TraceSink, format_timestamp

logger = logging.getLogger("visiongate")

T = TypeVar("T")

LOG_INTERVAL_SECONDS: Final = 60.0


class DeliveryFailures:
    """Lost records of one sink: a total, the ones not yet reported, and the last error."""

    def __init__(
        self,
        what: str,
        *,
        log_interval: float = LOG_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._what = what
        self._log_interval = log_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last_logged: float | None = None
        self.lost = 0
        """Records lost since this sink was created."""
        self._unreported = 0
        self._since: float | None = None
        self._last_error = ""

    def failed(self, error: BaseException) -> None:
        """Count one lost record; log if nothing was logged in the last minute."""
        with self._lock:
            self.lost += 1
            self._unreported += 1
            if self._since is None:
                self._since = time.time()
            self._last_error = _describe(error)
            now = self._clock()
            due = self._last_logged is None or now - self._last_logged >= self._log_interval
            if due:
                self._last_logged = now
        if due:
            logger.warning(
                "visiongate: cannot write the decision trace %s: %s (%d record(s) lost so far; "
                "deciding goes on)",
                self._what,
                self._last_error,
                self.lost,
            )

    def pending(self) -> dict[str, Any] | None:
        """The `trace_errors` field for the next record, or None when nothing was lost."""
        with self._lock:
            if not self._unreported:
                return None
            return {
                "lost": self._unreported,
                "since": format_timestamp(self._since or time.time()),
                "error": self._last_error,
            }

    def delivered(self, reported: dict[str, Any] | None) -> None:
        """A record carrying `reported` was written: those losses are now on the record."""
        if reported is None:
            return
        with self._lock:
            self._unreported -= reported["lost"]
            if not self._unreported:
                self._since = None

    def deliver(self, record: dict[str, Any], send: Callable[[dict[str, Any]], T]) -> T | None:
        """`send` the record, with the pending `trace_errors` report; what `send` returned, or
        None when it raised: the record then counts as lost (tracing never fails a decision)."""
        report = self.pending()
        try:
            result = send(with_report(record, report))
        except Exception as error:  # any failure of a sink: counted, logged, reported
            self.failed(error)
            return None
        self.delivered(report)
        return result


def with_report(record: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any]:
    return record if report is None else {**record, "trace_errors": report}


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return f"{type(error).__name__}: {error}".splitlines()[0][:200]


class GuardedSink:
    """A caller's callable sink that can fail without failing the decision."""

    def __init__(self, sink: TraceSink) -> None:
        self._sink = sink
        self.failures = DeliveryFailures(f"sink {getattr(sink, '__name__', type(sink).__name__)}")

    def __call__(self, record: dict[str, Any]) -> None:
        self.failures.deliver(record, self._sink)

    def close(self) -> None:
        close = getattr(self._sink, "close", None)
        if callable(close):
            close()


class FanOut:
    """Several sinks, each guarded on its own: one failing never starves the others."""

    def __init__(self, sinks: Sequence[TraceSink]) -> None:
        self.sinks = tuple(sinks)

    def __call__(self, record: dict[str, Any]) -> None:
        for sink in self.sinks:
            sink(record)

    def close(self) -> None:
        for sink in self.sinks:
            close = getattr(sink, "close", None)
            if callable(close):
                close()
