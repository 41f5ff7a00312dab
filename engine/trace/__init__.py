"""Trace sinks: where decision records go (JSON Lines files, OpenTelemetry logs, callables).

Part of the runtime: a sink never fails a decision. What it cannot deliver is counted,
logged at most once a minute, and reported in the next record it does deliver.

Names are imported on first use (PEP 562): every decision imports `_encode` for its
timestamp, and a command line that writes no trace must not pay for the sinks, their JSON
encoder (msgspec) or OpenTelemetry (the optional `otel` extra).
"""

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from ._encode import TraceSink, encode_line, format_timestamp
    from ._failures import DeliveryFailures, FanOut, GuardedSink
    from ._jsonl import JsonlTrace
    from ._otel import OtelTrace as OtelTrace  # the name `__getattr__` provides at run time
    from ._rotate import Rotation

_HOMES: dict[str, str] = {
    "DeliveryFailures": "._failures",
    "FanOut": "._failures",
    "GuardedSink": "._failures",
    "JsonlTrace": "._jsonl",
    "OtelTrace": "._otel",
    "Rotation": "._rotate",
    "TraceSink": "._encode",
    "encode_line": "._encode",
    "format_timestamp": "._encode",
}

__all__ = [
    "DeliveryFailures",
    "FanOut",
    "GuardedSink",
    "JsonlTrace",
    "Rotation",
    "TraceSink",
    "encode_line",
    "format_timestamp",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
