"""OpenAI Chat Completions: tool messages take text only ("For tool messages, only type `text`
is supported", research §1.2), so the native lane sends the images in a `user` message right
after the tool messages, as Goose and Pydantic AI do on Chat Completions (research §4).

The API rejects a `user` message between the `tool` replies of one assistant message (every
reply must follow the assistant message before anything else), so one turn's results are
every `tool` message first, then one `user` message with each result's images, each after
the line that names its call id. A provider that also rejects a `user` message right after a
`tool` message (Mistral) gets the bridge of `visiongate.kernel.shapes.rules`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._probe import CALL_ID, DESCRIPTION, TOOL, empty_parameters, messages_body
from ._shape import Limits, Message, Parts, Probe, Shape, bearer, data_url

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    if not parts.images:
        return [{"role": "tool", "tool_call_id": parts.call_id, "content": parts.text}]
    count = len(parts.images)
    note = f"[{count} image(s) of this tool result follow in a user message after the tool results]"
    user: list[Message] = [
        {"type": "text", "text": f"The image(s) returned by tool call {parts.call_id}:"}
    ]
    user += [{"type": "image_url", "image_url": {"url": data_url(image)}} for image in parts.images]
    return [
        {"role": "tool", "tool_call_id": parts.call_id, "content": f"{parts.text}\n{note}"},
        {"role": "user", "content": user},
    ]


def _merge(parts: list[list[Message]]) -> list[Message]:
    """Every tool message first; then one user message with each result's images."""
    tools: list[Message] = []
    images: list[Message] = []
    for messages in parts:
        tool, *follow = messages
        tools.append(tool)
        for user in follow:
            images += user["content"]
    return [*tools, {"role": "user", "content": images}] if images else tools


def _probe_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"id": CALL_ID, "type": "function", "function": {"name": TOOL, "arguments": "{}"}}
    tool = {
        "type": "function",
        "function": {"name": TOOL, "description": DESCRIPTION, "parameters": empty_parameters()},
    }
    turn = {"role": "assistant", "content": None, "tool_calls": [call]}
    return messages_body(model, tool, turn, result)


def _probe_reply(body: Mapping[str, Any]) -> str:
    choices = body.get("choices") or []
    message = choices[0].get("message", {}) if choices and isinstance(choices[0], dict) else {}
    content = message.get("content") if isinstance(message, dict) else None
    return content.strip() if isinstance(content, str) else ""


SHAPE = Shape(
    name="openai-chat",
    title="OpenAI Chat Completions",
    limits=Limits(
        formats=("image/jpeg", "image/png", "image/webp"),
        max_image_base64=20_000_000,
        max_edge_px=2048,
        max_images_per_request=500,
    ),
    note=(
        "tool messages are text-only, so the native lane sends the images in a user message "
        "right after the tool messages (as Goose and Pydantic AI do on Chat Completions)"
    ),
    render=_render,
    merge=_merge,
    user_follows_tool=True,
    probe=Probe(
        path=lambda model: "/chat/completions",
        key_headers=bearer,
        body=_probe_body,
        reply=_probe_reply,
    ),
)
