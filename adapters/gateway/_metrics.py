"""The gateway's Prometheus metrics (`GET /metrics`), with the maintained client library.

Tool calls are counted from their decision records: the metrics are a trace sink next to the
others (`--trace`), so they say exactly what the records say. Sessions, refusals and the bytes
that cross the client's side are counted where they happen. Each gateway has a registry of its
own (several in one process, as in tests, never mix), with the process collector's memory and
CPU figures. Labels take a handful of values each; tool names, models and clients are in the
records, not in labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

__all__ = ["CONTENT_TYPE", "UPSTREAM_FAILURES", "GatewayMetrics"]

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
UPSTREAM_FAILURES: Final = frozenset({"timeout", "upstream_closed", "malformed", "too_large"})
"""Record outcomes that are the server's (or the way to it) failing, not the client's."""
_SECONDS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_UPSTREAM_SECONDS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class GatewayMetrics:
    """Every metric the gateway exports; `record` is the trace sink that feeds the call ones."""

    def __init__(self) -> None:
        registry = self.registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        self.decisions = Counter(
            "visiongate_decisions",
            "Tool calls decided, by lane and image source",
            ["lane", "source"],
            registry=registry,
        )
        self.calls = Counter(
            "visiongate_tool_calls",
            "Tool calls answered, by outcome (routed, or why there was no result to route)",
            ["outcome"],
            registry=registry,
        )
        self.images = Counter(
            "visiongate_images",
            "Images in tool results: attached as pixels, or withheld (a MEDIA: path or text)",
            ["outcome"],
            registry=registry,
        )
        self.result_bytes = Counter(
            "visiongate_tool_result_bytes",
            "Bytes of tool results, as the server sent them and as the client got them",
            ["direction"],
            registry=registry,
        )
        self.client_bytes = Counter(
            "visiongate_client_message_bytes",
            "Bytes of JSON-RPC messages from and to the clients",
            ["direction"],
            registry=registry,
        )
        self.route_seconds = Histogram(
            "visiongate_route_seconds",
            "Time the gateway spent routing a tool result (gate, images, fitting)",
            buckets=_SECONDS,
            registry=registry,
        )
        self.upstream_seconds = Histogram(
            "visiongate_upstream_seconds",
            "Time from a tool call to the server's answer",
            buckets=_UPSTREAM_SECONDS,
            registry=registry,
        )
        self.upstream_failures = Counter(
            "visiongate_upstream_failures",
            "Calls the server did not answer usefully: timeout, gone, malformed, too large; "
            "and servers that could not be started or reached",
            ["kind"],
            registry=registry,
        )
        self.sessions = Gauge("visiongate_sessions", "Open sessions", registry=registry)
        self.sessions_started = Counter(
            "visiongate_sessions_started", "Sessions opened", registry=registry
        )
        self.sessions_ended = Counter(
            "visiongate_sessions_ended",
            "Sessions ended, by why (deleted, idle, evicted, upstream_gone, drained, failed)",
            ["reason"],
            registry=registry,
        )
        self.sessions_evicted = Counter(
            "visiongate_sessions_evicted",
            "Idle sessions ended to make room for a new one: the table full, or the "
            "credentials at --max-sessions-per-credential",
            ["reason"],
            registry=registry,
        )
        self.refused = Counter(
            "visiongate_http_refused",
            "HTTP requests refused before reaching a session, by why",
            ["reason"],
            registry=registry,
        )

    def record(self, record: Mapping[str, Any]) -> None:
        """A decision record (the trace sink): one tool call."""
        execution = record.get("execution")
        execution = execution if isinstance(execution, Mapping) else {}
        self.decisions.labels(str(record.get("lane")), str(record.get("source"))).inc()
        outcome = execution.get("outcome") if execution.get("action") == "no_result" else None
        self.calls.labels(str(outcome or "routed")).inc()
        if outcome in UPSTREAM_FAILURES:
            self.upstream_failures.labels(str(outcome)).inc()
        found = _count(execution.get("images_found"))
        attached = len(execution.get("attached") or ())
        if attached:
            self.images.labels("attached").inc(attached)
        if found > attached:
            self.images.labels("withheld").inc(found - attached)
        proxy = record.get("proxy")
        if isinstance(proxy, Mapping):
            self._proxy(proxy, routed=outcome is None)

    def _proxy(self, proxy: Mapping[str, Any], *, routed: bool) -> None:
        self.result_bytes.labels("from_server").inc(_count(proxy.get("bytes_from_server")))
        self.result_bytes.labels("to_client").inc(_count(proxy.get("bytes_to_client")))
        if routed and isinstance(proxy.get("route_ms"), int | float):
            self.route_seconds.observe(proxy["route_ms"] / 1000)
        local = "local_tool" in proxy  # the gateway's own tool: no server was asked
        if routed and not local and isinstance(proxy.get("upstream_ms"), int | float):
            self.upstream_seconds.observe(proxy["upstream_ms"] / 1000)

    def count_bytes(self, direction: str, size: int) -> None:
        self.client_bytes.labels(direction).inc(size)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
