"""Decision records as OpenTelemetry log records (`pip install 'visiongate[otel]'`).

Fleets ship logs through OpenTelemetry collectors already; this sink puts each decision
there. One record becomes one log record named `visiongate.decision`: its body is the whole
record (a structured map), its attributes are the record's fields flattened with dots under
`visiongate.` (`visiongate.lane`, `visiongate.facts.catalog`, `visiongate.policy.sha256`),
plus the GenAI semantic conventions where one fits: `gen_ai.provider.name`,
`gen_ai.request.model`, and `gen_ai.tool.name` for an MCP tool. When a span is current (the
agent traces its tool calls), the same attributes are added to it as an event, and the log
record carries the span's trace and span ids.

Off by default: nothing is emitted unless a gate is given this sink. Configured in code (a
`LoggerProvider`) or, without one, by the standard environment variables: the global
provider if the application set one, else a provider built from `OTEL_SERVICE_NAME`,
`OTEL_RESOURCE_ATTRIBUTES`, `OTEL_LOGS_EXPORTER` (`otlp`, `console` or `none`),
`OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`, `..._HEADERS`,
`..._TIMEOUT` and `..._COMPRESSION` (OTLP over HTTP/protobuf), and `OTEL_SDK_DISABLED`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from importlib import metadata
from typing import Any, Final

from ._failures import DeliveryFailures

try:
    from opentelemetry import trace as otel_trace
    from opentelemetry._logs import LoggerProvider, SeverityNumber, get_logger_provider
    from opentelemetry.sdk._logs import LoggerProvider as SdkLoggerProvider
    from opentelemetry.sdk._logs.export import (
        BatchLogRecordProcessor,
        ConsoleLogRecordExporter,
        LogRecordExporter,
    )
    from opentelemetry.sdk.resources import Resource
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError("OtelTrace needs OpenTelemetry: pip install 'visiongate[otel]'") from error

EVENT_NAME: Final = "visiongate.decision"
PREFIX: Final = "visiongate."
GEN_AI: Final = {
    "provider": "gen_ai.provider.name",
    "model": "gen_ai.request.model",
}
"""GenAI semantic conventions (OpenTelemetry semconv `gen_ai.*`) for record fields."""

Primitive = str | bool | int | float


class OtelTrace:
    """A trace sink that emits each decision record as an OpenTelemetry log record."""

    def __init__(
        self, logger_provider: LoggerProvider | None = None, *, span_events: bool = True
    ) -> None:
        self._owned: SdkLoggerProvider | None = None
        if logger_provider is None:
            logger_provider = _provider_from_environment()
            if isinstance(logger_provider, SdkLoggerProvider):
                self._owned = logger_provider
        self._provider = logger_provider
        self._logger = logger_provider.get_logger("visiongate", _version())
        self._span_events = span_events
        self.failures = DeliveryFailures("to OpenTelemetry")

    def __call__(self, record: dict[str, Any]) -> None:
        self.failures.deliver(record, self._emit)

    def _emit(self, record: dict[str, Any]) -> None:
        attributes = attributes_of(record)
        warned = bool(record.get("warnings")) or "trace_errors" in record
        self._logger.emit(
            timestamp=_nanoseconds(record.get("timestamp")),
            severity_number=SeverityNumber.WARN if warned else SeverityNumber.INFO,
            severity_text="WARN" if warned else "INFO",
            body=_body(record),
            attributes=attributes,
            event_name=EVENT_NAME,
        )
        span = otel_trace.get_current_span()
        if self._span_events and span.is_recording():
            span.add_event(EVENT_NAME, attributes=attributes)

    def close(self) -> None:
        """Flush what is batched; shut down a provider this sink built itself."""
        if self._owned is not None:
            self._owned.shutdown()
            self._owned = None
        else:
            flush = getattr(self._provider, "force_flush", None)
            if callable(flush):
                flush()


def attributes_of(record: Mapping[str, Any]) -> dict[str, Primitive | list[Primitive]]:
    """The record's fields as OpenTelemetry attributes (primitives and primitive lists)."""
    found: dict[str, Primitive | list[Primitive]] = {}
    _flatten(record, PREFIX, found)
    for field, name in GEN_AI.items():
        value = record.get(field)
        if isinstance(value, str):
            found[name] = value
    execution = record.get("execution")
    tool = execution.get("tool_name") if isinstance(execution, dict) else None
    if isinstance(tool, str):
        found["gen_ai.tool.name"] = tool
    return found


def _flatten(value: Mapping[str, Any], prefix: str, into: dict[str, Any]) -> None:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            _flatten(item, name + ".", into)
        elif _attribute_value(item):
            into[name] = item
        # Lists of objects (the images of `execution`) stay in the body only.


def _attribute_value(item: Any) -> bool:
    """A primitive, or a list of primitives of one type: what an attribute can hold."""
    if isinstance(item, str | bool | int | float):
        return True
    kinds = {type(element) for element in item} if isinstance(item, list) else {dict}
    return len(kinds) <= 1 and kinds <= {str, bool, int, float}


def _body(value: Any) -> Any:
    """The record as an OpenTelemetry AnyValue (maps, lists, primitives; None dropped)."""
    if isinstance(value, Mapping):
        return {str(k): _body(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_body(item) for item in value if item is not None]
    if isinstance(value, str | bool | int | float | bytes):
        return value
    return str(value)


def _nanoseconds(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1e9)
    except ValueError:
        return None


def _version() -> str:
    try:
        return metadata.version("visiongate")
    except metadata.PackageNotFoundError:
        return "unknown"


def _provider_from_environment() -> LoggerProvider:
    """The application's global provider, else one built from the `OTEL_*` variables."""
    current = get_logger_provider()
    if isinstance(current, SdkLoggerProvider):
        return current
    disabled = os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    provider = SdkLoggerProvider(resource=Resource.create(), shutdown_on_exit=True)
    exporter = None if disabled else _exporter(os.environ.get("OTEL_LOGS_EXPORTER", "otlp"))
    if exporter is not None:
        provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
    return provider


def _exporter(name: str) -> LogRecordExporter | None:
    name = name.strip().lower() or "otlp"
    if name == "none":
        return None
    if name == "console":
        return ConsoleLogRecordExporter()
    if name != "otlp":
        raise ValueError(f"OTEL_LOGS_EXPORTER `{name}` is not supported: use otlp, console, none")
    protocol = os.environ.get(
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
    )
    if protocol.strip() not in ("", "http/protobuf"):
        raise ValueError(f"OTLP protocol `{protocol}` is not supported: use http/protobuf")
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    return OTLPLogExporter()
