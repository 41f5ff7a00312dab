"""Anthropic Messages: the tool result is a `tool_result` block in a user message, and its
images are base64 `image` blocks inside it.

Limits (research §1.1): the 5 MB cap applies to the base64 string (error text: `image
exceeds 5 MB maximum: ... > 5242880 bytes`); 8000 px per side (2000 px once a request holds
more than 20 images); 100 images per request. One turn's results are one user message of
`tool_result` blocks, in call order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._probe import CALL_ID, DESCRIPTION, TOOL, empty_parameters, messages_body
from ._shape import Limits, Message, Parts, Probe, Shape, one_user_message

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    content: list[Message] = [{"type": "text", "text": parts.text}]
    content += [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64},
        }
        for image in parts.images
    ]
    block: Message = {"type": "tool_result", "tool_use_id": parts.call_id, "content": content}
    if parts.is_error:
        block["is_error"] = True
    return [{"role": "user", "content": [block]}]


def _probe_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"type": "tool_use", "id": CALL_ID, "name": TOOL, "input": {}}
    tool = {"name": TOOL, "description": DESCRIPTION, "input_schema": empty_parameters()}
    return messages_body(model, tool, {"role": "assistant", "content": [call]}, result)


def _probe_reply(body: Mapping[str, Any]) -> str:
    content = body.get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(block.get("text", "")) for block in blocks if isinstance(block, dict)
    ).strip()


SHAPE = Shape(
    name="anthropic",
    title="Anthropic Messages",
    limits=Limits(
        formats=("image/jpeg", "image/png", "image/gif", "image/webp"),
        max_image_base64=5_242_880,
        max_edge_px=8000,
        max_images_per_request=100,
    ),
    note=(
        "tool_result content takes image blocks; the 5 MB cap applies to the base64 string; "
        "8000 px per side (2000 px once a request holds more than 20 images); 100 images "
        "per request"
    ),
    render=_render,
    merge=one_user_message("content"),
    probe=Probe(
        path=lambda model: "/v1/messages",
        key_headers=lambda key: {"x-api-key": key},
        body=_probe_body,
        reply=_probe_reply,
    ),
)
