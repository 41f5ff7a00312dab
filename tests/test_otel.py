"""Decision records into OpenTelemetry: the SDK's in-memory exporter, span events, and OTLP
over HTTP to a loopback receiver that decodes the protobuf it is sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    SimpleLogRecordProcessor,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from visiongate.engine import Gate
from visiongate.engine.trace import OtelTrace


@pytest.fixture
def memory() -> tuple[LoggerProvider, InMemoryLogRecordExporter]:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    return provider, exporter


def test_each_decision_is_one_log_record_with_genai_and_record_attributes(
    memory: tuple[LoggerProvider, InMemoryLogRecordExporter],
) -> None:
    provider, exporter = memory
    gate = Gate.load(trace=OtelTrace(provider))
    decision = gate.decide("anthropic", "claude-sonnet-4-5", trace=False)
    record = decision.record(source="mcp", execution={"tool_name": "screenshot", "attached": []})
    gate.trace(record)
    [exported] = exporter.get_finished_logs()
    log = exported.log_record
    attributes = dict(log.attributes or {})
    assert log.event_name == "visiongate.decision"
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["gen_ai.request.model"] == "claude-sonnet-4-5"
    assert attributes["gen_ai.tool.name"] == "screenshot"
    assert attributes["visiongate.decision_id"] == decision.decision_id
    assert attributes["visiongate.lane"] == "native"
    assert attributes["visiongate.facts.catalog"] == "vision"
    assert attributes["visiongate.policy.sha256"] == decision.policy.sha256
    assert attributes["visiongate.matched"] == ("auto-vision-model",)
    assert isinstance(log.body, dict) and log.body["decision_id"] == decision.decision_id
    assert abs((log.timestamp or 0) - decision.timestamp * 1e9) < 2_000  # microseconds kept


def test_a_decision_inside_a_span_is_also_an_event_on_it(
    memory: tuple[LoggerProvider, InMemoryLogRecordExporter],
) -> None:
    provider, exporter = memory
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    gate = Gate.load(trace=OtelTrace(provider))
    with tracer_provider.get_tracer("agent").start_as_current_span("tool screenshot") as span:
        decision = gate.decide("openai", "o3-mini")
    [finished] = spans.get_finished_spans()
    [event] = finished.events
    assert event.name == "visiongate.decision"
    assert event.attributes is not None
    assert event.attributes["visiongate.decision_id"] == decision.decision_id
    assert event.attributes["visiongate.facts.catalog"] == "no_vision"
    [exported] = exporter.get_finished_logs()
    assert exported.log_record.span_id == span.get_span_context().span_id


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP logs endpoint: decodes each request's protobuf and keeps it."""

    received: ClassVar[list[ExportLogsServiceRequest]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        assert self.path == "/v1/logs"
        assert self.headers["Content-Type"] == "application/x-protobuf"
        self.received.append(ExportLogsServiceRequest.FromString(body))
        answer = ExportLogsServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[ExportLogsServiceRequest]]]:
    received: ClassVar[list[ExportLogsServiceRequest]] = []
    handler = type("Handler", (_Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    return getattr(any_value, kind)


def test_records_reach_a_collector_over_otlp_http_configured_by_otel_variables(
    receiver: tuple[str, list[ExportLogsServiceRequest]], monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, received = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "fleet-agent-7")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
    sink = OtelTrace()
    gate = Gate.load(trace=sink)
    decisions = [
        gate.decide("openai", "gpt-4o"),
        gate.decide("openrouter", "deepseek/deepseek-v3.2"),
    ]
    sink.close()
    logs = [
        (resource_logs.resource, log)
        for request in received
        for resource_logs in request.resource_logs
        for scope_logs in resource_logs.scope_logs
        for log in scope_logs.log_records
    ]
    assert len(logs) == 2
    resource = {kv.key: _value(kv.value) for kv in logs[0][0].attributes}
    assert resource["service.name"] == "fleet-agent-7"
    assert resource["deployment.environment"] == "test"
    for (_, log), decision in zip(logs, decisions, strict=True):
        attributes = {kv.key: _value(kv.value) for kv in log.attributes}
        assert log.event_name == "visiongate.decision"
        assert attributes["visiongate.decision_id"] == decision.decision_id
        assert attributes["gen_ai.request.model"] == decision.model
        assert attributes["visiongate.lane"] == decision.lane
        assert _value(log.body)["facts"] == decision.facts


def test_an_unreachable_collector_never_fails_a_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    sink = OtelTrace()
    gate = Gate.load(trace=sink)
    assert gate.decide("anthropic", "claude-sonnet-4-5").lane == "native"
    sink.close()


def test_an_unsupported_exporter_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "zipkin")
    with pytest.raises(ValueError, match="OTEL_LOGS_EXPORTER `zipkin` is not supported"):
        OtelTrace()


def test_the_gate_never_imports_opentelemetry_unless_asked() -> None:
    import subprocess
    import sys

    code = "import sys, visiongate.engine; visiongate.engine.Gate.load().decide('openai', 'gpt-4o')"
    code += "; print(any(name.startswith('opentelemetry') for name in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
