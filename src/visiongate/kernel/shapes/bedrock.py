"""Bedrock Converse: the tool result is a `toolResult` block in a user message, and its images
are `image` blocks whose `format` is a bare word (png, jpeg, gif, webp), research §1.5.

The rendered messages are the JSON wire form (base64 text in `bytes`, as the Converse HTTP
API and the AWS CLI take it); boto3 takes raw bytes (`Payload.boto3_messages`). Limits: 3.75
MB raw per image (5,000,000 in base64), 8000 px per side, 20 images per message. One turn's
results are one user message of `toolResult` blocks.
"""

from __future__ import annotations

from ._shape import Limits, Message, Parts, Shape, one_user_message

__all__ = ["SHAPE"]


def _render(parts: Parts) -> list[Message]:
    content: list[Message] = [{"text": parts.text}]
    content += [
        {"image": {"format": image.media_type.partition("/")[2], "source": {"bytes": image.base64}}}
        for image in parts.images
    ]
    block: Message = {"toolUseId": parts.call_id, "content": content}
    if parts.is_error:
        block["status"] = "error"
    return [{"role": "user", "content": [{"toolResult": block}]}]


SHAPE = Shape(
    name="bedrock",
    title="Bedrock Converse",
    limits=Limits(
        formats=("image/jpeg", "image/png", "image/gif", "image/webp"),
        max_image_base64=5_000_000,
        max_edge_px=8000,
        max_images_per_request=20,
    ),
    note=(
        "toolResult content takes image blocks whose `format` is a bare word and whose bytes "
        "are raw; 3.75 MB raw per image (5,000,000 in base64), 8000 px per side, 20 images "
        "per message"
    ),
    render=_render,
    merge=one_user_message("content"),
)
