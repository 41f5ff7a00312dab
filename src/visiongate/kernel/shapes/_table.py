"""Every shape, in the order the documentation lists them, and the look-up by name."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from . import API_NAMES, anthropic, bedrock, gemini, ollama, openai_chat, openai_responses
from ._shape import Shape

__all__ = ["BY_NAME", "SHAPES", "shape_named"]

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


def shape_named(name: str) -> Shape:
    """The shape called `name`; a `ValueError` naming the shapes for any other name."""
    found = BY_NAME.get(name)
    if found is None:
        raise ValueError(f"unknown api `{name}`: expected one of {', '.join(API_NAMES)}")
    return found
