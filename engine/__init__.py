"""Load, validate, compile and decide image-routing policies.

The public surface is deliberately small; everything else lives in private modules.
"""

from ._compile import CellVerdict
from ._decision import Decision, PolicyRef
from ._diagnostics import Diagnostic, Location, PolicyError
from ._gate import FactError, Gate, ReloadResult
from ._load import CompiledPolicy, analyze_policy_text, load_policy
from ._settings import ExecutionSettings, NativeSettings, SanitizeSettings
from ._vocabulary import FACTS, LANES, SOURCES, all_cells
from .trace import JsonlTrace

__all__ = [
    "FACTS",
    "LANES",
    "SOURCES",
    "CellVerdict",
    "CompiledPolicy",
    "Decision",
    "Diagnostic",
    "ExecutionSettings",
    "FactError",
    "Gate",
    "JsonlTrace",
    "Location",
    "NativeSettings",
    "PolicyError",
    "PolicyRef",
    "ReloadResult",
    "SanitizeSettings",
    "all_cells",
    "analyze_policy_text",
    "load_policy",
]
