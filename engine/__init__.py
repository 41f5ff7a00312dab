"""Load, validate, compile and decide image-routing policies.

The public surface is deliberately small; everything else lives in private modules. Names are
imported on first use (PEP 562): the command line imports `visiongate.engine._load` or the
tooling on every call, and importing a submodule runs this file first, so it must not pull in
the gate, the fact resolver and their dependencies for a command that needs none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from visiongate.kernel._errors import VisiongateError

    from ._compile import CellVerdict
    from ._decision import Decision, DecisionIds, PolicyRef
    from ._diagnostics import Diagnostic, Location, PolicyError
    from ._gate import FactError, Gate
    from ._load import CompiledPolicy, analyze_policy_text, load_policy
    from ._settings import (
        INVISIBLE_CHANNELS,
        ExecutionSettings,
        InvisibleMode,
        NativeSettings,
        SanitizeSettings,
    )
    from ._vocabulary import FACTS, LANES, SOURCES, all_cells
    from ._watch import PolicyCheck, ReloadResult
    from .trace import JsonlTrace

_HOMES: dict[str, str] = {
    "CellVerdict": "._compile",
    "Decision": "._decision",
    "DecisionIds": "._decision",
    "JsonlTrace": ".trace",
    "PolicyRef": "._decision",
    "Diagnostic": "._diagnostics",
    "Location": "._diagnostics",
    "PolicyError": "._diagnostics",
    "VisiongateError": "visiongate.kernel._errors",
    "FactError": "._gate",
    "Gate": "._gate",
    "PolicyCheck": "._watch",
    "ReloadResult": "._watch",
    "CompiledPolicy": "._load",
    "analyze_policy_text": "._load",
    "load_policy": "._load",
    "ExecutionSettings": "._settings",
    "NativeSettings": "._settings",
    "SanitizeSettings": "._settings",
    "INVISIBLE_CHANNELS": "._settings",
    "InvisibleMode": "._settings",
    "FACTS": "._vocabulary",
    "LANES": "._vocabulary",
    "SOURCES": "._vocabulary",
    "all_cells": "._vocabulary",
}

__all__ = [
    "FACTS",
    "INVISIBLE_CHANNELS",
    "LANES",
    "SOURCES",
    "CellVerdict",
    "CompiledPolicy",
    "Decision",
    "DecisionIds",
    "Diagnostic",
    "ExecutionSettings",
    "FactError",
    "Gate",
    "InvisibleMode",
    "JsonlTrace",
    "Location",
    "NativeSettings",
    "PolicyCheck",
    "PolicyError",
    "PolicyRef",
    "ReloadResult",
    "SanitizeSettings",
    "VisiongateError",
    "all_cells",
    "analyze_policy_text",
    "load_policy",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
