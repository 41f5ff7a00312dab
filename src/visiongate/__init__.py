"""visiongate: one gate, written as data, for images produced by agent tools.

    from visiongate import Gate, Router

    router = Router(Gate.load("policy.yaml", "agent.yaml"))
    routed = await router.mcp(result, provider="anthropic", model="claude-sonnet-4-5")

The names below are the everyday surface; `visiongate.engine` and `visiongate.adapters` hold
the rest. They are imported on first use (PEP 562): `visiongate --help` runs this file and
must not pay for the gate, the image stage or the rules engine.
"""

from __future__ import annotations

from visiongate.kernel._lazy import lazy_names

# Not `typing.TYPE_CHECKING`: every command runs this file, and `typing` costs its `--help`
# a few milliseconds (issue 37); mypy reads a module-level `TYPE_CHECKING = False` the same.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from visiongate.adapters import ImageCache, Payload, RoutedResult, Router, Sanitizer
    from visiongate.engine import (
        CompiledPolicy,
        Decision,
        FactError,
        Gate,
        JsonlTrace,
        PolicyError,
        load_policy,
    )
    from visiongate.kernel._errors import VisiongateError

__version__ = "0.1.0"

_HOMES: dict[str, str] = {
    "CompiledPolicy": "visiongate.engine",
    "Decision": "visiongate.engine",
    "FactError": "visiongate.engine",
    "Gate": "visiongate.engine",
    "JsonlTrace": "visiongate.engine",
    "PolicyError": "visiongate.engine",
    "VisiongateError": "visiongate.kernel._errors",
    "load_policy": "visiongate.engine",
    "ImageCache": "visiongate.adapters",
    "Payload": "visiongate.adapters",
    "RoutedResult": "visiongate.adapters",
    "Router": "visiongate.adapters",
    "Sanitizer": "visiongate.adapters",
}

__all__ = [
    "CompiledPolicy",
    "Decision",
    "FactError",
    "Gate",
    "ImageCache",
    "JsonlTrace",
    "Payload",
    "PolicyError",
    "RoutedResult",
    "Router",
    "Sanitizer",
    "VisiongateError",
    "__version__",
    "load_policy",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
