"""OpenAI Responses: the tool result is a `function_call_output` item whose `output` takes
`input_image` items (data URLs) since 2025-09 (openai-python 8b333e66, research §1.3).

Limits: 20 MB per image, 500 images and 50 MB of images per request; high detail works on at
most 2000 px on the long side, so larger edges only cost bytes; GIF must not be animated.
One turn's results are independent input items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._probe import CALL_ID, DESCRIPTION, PROMPT, TOOL, empty_parameters
from ._shape import Limits, Message, Parts, Probe, Shape, bearer, data_url

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    output: str | list[Message] = parts.text
    if parts.images:
        output = [{"type": "input_text", "text": parts.text}]
        output += [
            {"type": "input_image", "image_url": data_url(image), "detail": "auto"}
            for image in parts.images
        ]
    return [{"type": "function_call_output", "call_id": parts.call_id, "output": output}]


def _probe_body(model: str, result: list[Message]) -> dict[str, Any]:
    tool = {
        "type": "function",
        "name": TOOL,
        "description": DESCRIPTION,
        "parameters": empty_parameters(),
    }
    return {
        "model": model,
        "tools": [tool],
        "input": [
            {"role": "user", "content": PROMPT},
            {"type": "function_call", "call_id": CALL_ID, "name": TOOL, "arguments": "{}"},
            *result,
        ],
    }


def _probe_reply(body: Mapping[str, Any]) -> str:
    if isinstance(body.get("output_text"), str):
        return str(body["output_text"]).strip()
    texts = [
        str(part.get("text", ""))
        for item in body.get("output") or []
        if isinstance(item, dict)
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") in ("output_text", "text")
    ]
    return "\n".join(texts).strip()


SHAPE = Shape(
    name="openai-responses",
    title="OpenAI Responses",
    limits=Limits(
        formats=("image/jpeg", "image/png", "image/webp", "image/gif"),
        max_image_base64=20_000_000,
        max_edge_px=2048,
        max_images_per_request=500,
    ),
    note=(
        "function_call_output.output takes input_image items since 2025-09; 20 MB per "
        "image, 500 images and 50 MB of images per request; high detail works on at most "
        "2000 px on the long side; GIF must not be animated"
    ),
    render=_render,
    probe=Probe(
        path=lambda model: "/responses",
        key_headers=bearer,
        body=_probe_body,
        reply=_probe_reply,
    ),
)
