"""What an API shape is: its name, limits, message rules, how a tool result is written in it,
how one turn's results are merged, and how a probe calls it.

The six shapes are one module each (`anthropic`, `openai_responses`, `openai_chat`, `gemini`,
`bedrock`, `ollama`); `visiongate.kernel.shapes.SHAPES` is the one list of them. Nothing here
imports the engine or an image library: the engine reads names and limits from here, the
adapters render with the same modules, and the command line lists the names without
importing either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "Image",
    "Limits",
    "Message",
    "Parts",
    "Probe",
    "Shape",
    "bearer",
    "data_url",
    "one_user_message",
]

Message = dict[str, Any]


class Image(Protocol):
    """What rendering reads of an image (the image stage's `ProcessedImage`)."""

    @property
    def media_type(self) -> str: ...
    @property
    def base64(self) -> str: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...


@dataclass(frozen=True)
class Limits:
    """What one payload of a shape carries at most, and in which formats."""

    formats: tuple[str, ...]
    """Media types in preference order: the first is the re-encode target."""
    max_image_base64: int
    """Per image, counted on the base64 text."""
    max_edge_px: int
    max_images_per_request: int


@dataclass(frozen=True)
class Parts:
    """One tool result, ready to be written in a shape."""

    text: str
    images: Sequence[Image]
    is_error: bool
    call_id: str
    tool_name: str | None


@dataclass(frozen=True)
class Probe:
    """How a probe calls the shape and reads the model's answer."""

    path: Callable[[str], str]
    """The endpoint path for a model, appended to the base URL."""
    key_headers: Callable[[str], dict[str, str]]
    body: Callable[[str, list[Message]], dict[str, Any]]
    """(model, tool-result messages) -> the request body."""
    reply: Callable[[Mapping[str, Any]], str]
    """The response body -> the model's text (empty when there is none)."""


def _concatenated(parts: list[list[Message]]) -> list[Message]:
    return [message for messages in parts for message in messages]


@dataclass(frozen=True)
class Shape:
    """One API shape."""

    name: str
    title: str
    limits: Limits
    note: str
    """The limits and where images go, with where that is documented."""
    render: Callable[[Parts], list[Message]]
    """One tool result as the messages of this shape."""
    merge: Callable[[list[list[Message]]], list[Message]] = _concatenated
    """The messages of one turn's results (each `render`ed, in call order) as one turn."""
    user_follows_tool: bool = False
    """The native lane sends images in a `user` message right after the tool messages (the
    shape's tool messages take text only): a route whose provider rejects a `user` message
    after a `tool` message needs the bridge (`visiongate.kernel.shapes.rules`)."""
    probe: Probe | None = None
    """None: `visiongate probe` does not speak this shape."""


def data_url(image: Image) -> str:
    return f"data:{image.media_type};base64,{image.base64}"


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def one_user_message(key: str) -> Callable[[list[list[Message]]], list[Message]]:
    """A turn merger for shapes whose every result is one user message (Anthropic, Bedrock,
    Gemini): their blocks (`key`) become one user message."""

    def merge(parts: list[list[Message]]) -> list[Message]:
        blocks = [block for messages in parts for message in messages for block in message[key]]
        return [{"role": "user", key: blocks}]

    return merge
