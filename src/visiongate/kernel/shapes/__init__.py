"""The API shapes visiongate writes tool results in, one module each, and the one list of them.

A shape is what an API is for a tool result: its name, formats and limits, its message
rules, how one result and one turn of results are written, and how a probe calls it. The
engine reads names and limits from here (the provider registry's `api`), the payload stage
renders with the same modules, and the command line lists the names; nothing here imports
the engine, an image library or an SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from . import anthropic, bedrock, gemini, ollama, openai_chat, openai_responses
from ._rules import BRIDGE_TEXT, USER_AFTER_TOOL, bridged, user_after_tool_positions
from ._shape import Image, Limits, Message, Parts, Probe, Shape, data_url

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

SHAPES: Final[tuple[Shape, ...]] = (
    anthropic.SHAPE,
    openai_responses.SHAPE,
    openai_chat.SHAPE,
    gemini.SHAPE,
    bedrock.SHAPE,
    ollama.SHAPE,
)
"""Every shape, in the order the documentation lists them."""

BY_NAME: Final[Mapping[str, Shape]] = MappingProxyType({shape.name: shape for shape in SHAPES})

API_NAMES: Final = tuple(BY_NAME)
"""The names of the shapes: the values of a provider's `api`."""

PROBE_APIS: Final = tuple(shape.name for shape in SHAPES if shape.probe is not None)
"""The shapes `visiongate probe` speaks."""


def shape_named(name: str) -> Shape:
    """The shape called `name`; a `ValueError` naming the shapes for any other name."""
    found = BY_NAME.get(name)
    if found is None:
        raise ValueError(f"unknown api `{name}`: expected one of {', '.join(API_NAMES)}")
    return found
