"""Trace sinks: where decision records go (JSON Lines files, OpenTelemetry logs, callables).

Part of the runtime: a sink never fails a decision. What it cannot deliver is counted,
logged at most once a minute, and reported in the next record it does deliver.
"""

from typing import TYPE_CHECKING

from ._encode import TraceSink, encode_line, format_timestamp
from ._failures import DeliveryFailures, FanOut, GuardedSink
from ._jsonl import JsonlTrace
from ._rotate import Rotation

if TYPE_CHECKING:
    from ._otel import OtelTrace as OtelTrace  # the name `__getattr__` provides at run time

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


def __getattr__(name: str) -> object:
    # `OtelTrace` needs the optional `otel` extra: imported only when asked for.
    if name == "OtelTrace":
        from ._otel import OtelTrace

        return OtelTrace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
