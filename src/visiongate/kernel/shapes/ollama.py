"""Ollama's native `/api/chat`: the tool result is a `tool` message whose `images` are base64
strings (every message, `tool` included, takes `images`: ollama docs/api.md, research §1.8).

The API has no error flag, so an error result says so in its text. No byte or count limit is
documented, and the model's projector resizes: 2048 px and 20 MB keep requests small. One
turn's results are N `tool` messages.
"""

from __future__ import annotations

from ._shape import Limits, Message, Parts, Shape

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    text = f"Error: {parts.text}" if parts.is_error else parts.text
    message: Message = {"role": "tool", "content": text}
    if parts.tool_name:
        message["tool_name"] = parts.tool_name
    if parts.images:
        message["images"] = [image.base64 for image in parts.images]
    return [message]


SHAPE = Shape(
    name="ollama",
    title="Ollama /api/chat",
    limits=Limits(
        formats=("image/jpeg", "image/png"),
        max_image_base64=20_000_000,
        max_edge_px=2048,
        max_images_per_request=100,
    ),
    note=(
        "every message, `tool` included, takes `images` (base64); no byte or count limit is "
        "documented, the model's projector resizes, so 2048 px and 20 MB keep requests small"
    ),
    render=_render,
)
