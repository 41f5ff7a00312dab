"""The API shapes visiongate writes tool results in, one module each, and the one list of them.

A shape is what an API is for a tool result: its name, formats and limits, its message
rules, how one result and one turn of results are written, and how a probe calls it. The
engine reads names and limits from here (the provider registry's `api`), the payload stage
renders with the same modules, and the command line lists the names; nothing here imports
the engine, an image library or an SDK.
"""

from __future__ import annotations

from visiongate.kernel._lazy import lazy_names

# Not `typing.TYPE_CHECKING`: the command line's `--help` imports this package for the names.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

    from ._rules import BRIDGE_TEXT, USER_AFTER_TOOL, bridged, user_after_tool_positions
    from ._shape import Image, Limits, Message, Parts, Probe, Shape, data_url
    from ._table import BY_NAME, SHAPES, shape_named

__all__ = [
    "API_NAMES",
    "BRIDGE_TEXT",
    "BY_NAME",
    "PROBE_APIS",
    "SHAPES",
    "USER_AFTER_TOOL",
    "Image",
    "Limits",
    "Message",
    "Parts",
    "Probe",
    "Shape",
    "bridged",
    "data_url",
    "shape_named",
    "user_after_tool_positions",
]

# The two lists of names, written out: `route --help`, `mcp --help` and `probe --help` list
# them without building the shapes (their dataclasses pull in `inspect`, issue 37);
# tests/test_shapes.py checks they are the shapes' own, in the same order.
API_NAMES: Final = ("anthropic", "openai-responses", "openai-chat", "gemini", "bedrock", "ollama")
"""The names of the shapes: the values of a provider's `api`."""

PROBE_APIS: Final = ("anthropic", "openai-responses", "openai-chat", "gemini")
"""The shapes `visiongate probe` speaks."""

_HOMES: dict[str, str] = {
    "BRIDGE_TEXT": "._rules",
    "USER_AFTER_TOOL": "._rules",
    "bridged": "._rules",
    "user_after_tool_positions": "._rules",
    "Image": "._shape",
    "Limits": "._shape",
    "Message": "._shape",
    "Parts": "._shape",
    "Probe": "._shape",
    "Shape": "._shape",
    "data_url": "._shape",
    "BY_NAME": "._table",
    "SHAPES": "._table",
    "shape_named": "._table",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
