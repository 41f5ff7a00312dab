"""Render a routed result as the tool-result message of a provider API.

| api                | the tool result                             | its images                 |
|--------------------|---------------------------------------------|----------------------------|
| `anthropic`        | user message, `tool_result` block           | base64 `image` blocks      |
| `openai-responses` | `function_call_output` item                 | `input_image` data URLs    |
| `openai-chat`      | `tool` message (text only)                  | a following `user` message |
| `gemini`           | `functionResponse` part (Gemini 3)          | `functionResponse.parts`   |
| `bedrock`          | user message, `toolResult` block (Converse) | `image` blocks             |
| `ollama`           | `tool` message (native `/api/chat`)         | the message's `images`     |

Rendering decides nothing: the gate chose the lane and the adapter chose the images. The only
check here is the last-resort guard (`_guard`): an image is sent only in the native lane, on a
route that does not refuse tool-result images, within the API's formats and limits; otherwise
it is withheld and a one-line summary takes its place in the text. The router already ran the
guard for the result's own API shape before writing the record, so rendering that shape
withholds nothing more.

Bedrock's image `bytes` come in two forms: `Payload.messages` is the JSON wire form (base64
text, as the Converse HTTP API and the AWS CLI take it) and `Payload.boto3_messages()` the
same messages with raw `bytes`, as boto3's `converse` takes them (boto3 base64-encodes them
itself; handing it the base64 text would encode it twice). Gemini's `functionResponse.name`
is the name in the model's `functionCall`: it must be given (`tool_name=`, or the routed
result's own), never guessed. A whole assistant turn of several results is `_turn`'s.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from visiongate.engine.facts import API_NAMES, ProviderRegistry

from .._routed import RoutedResult
from ..images import ProcessedImage
from ._guard import Withheld, guard_images, limits_for

__all__ = ["API_NAMES", "Payload", "Withheld", "render_payload"]

Message = dict[str, Any]


@dataclass(frozen=True)
class Payload:
    """The messages to append to the conversation for one tool result."""

    api: str
    messages: tuple[Message, ...]
    images_sent: int
    withheld: tuple[Withheld, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """The messages as JSON (for Bedrock: base64 image `bytes`, the HTTP API's form)."""
        return {"api": self.api, "messages": list(self.messages)}

    def boto3_messages(self) -> list[Message]:
        """Bedrock only: the messages with raw image `bytes`, as boto3's `converse` takes them
        (`messages` holds base64 text, the JSON wire form)."""
        if self.api != "bedrock":
            raise ValueError(
                f"raw image bytes are a `bedrock` form, and this payload is `{self.api}`"
            )
        return [_raw_bytes(message) for message in self.messages]

    def summary(self) -> dict[str, Any]:
        """What rendering did, for the decision record."""
        return {
            "api": self.api,
            "images_sent": self.images_sent,
            "withheld": [item.as_dict() for item in self.withheld],
        }


def render_payload(
    result: RoutedResult,
    api: str | None = None,
    *,
    tool_call_id: str = "call_0",
    tool_name: str | None = None,
    registry: ProviderRegistry | None = None,
) -> Payload:
    """The tool-result message(s) of `result` for `api` (default: the shape the result was
    routed for, which is the route's own unless the caller asked for another).

    `registry` supplies another API's formats and limits when `api` is not the route's; the
    bundled registry is used when it is not given.
    """
    api = api or result.api or result.route.api
    if api not in API_NAMES:
        raise ValueError(f"unknown api `{api}`: expected one of {', '.join(API_NAMES)}")
    images, withheld = guard_images(
        result.images,
        lane=result.lane,
        route=result.route,
        is_error=result.is_error,
        limits=limits_for(result.route, api, registry),
    )
    text = _with_summaries(result.text, result.images, withheld) or "(the tool returned no text)"
    name = tool_name or result.tool_name
    if api == "gemini" and not name:
        raise ValueError(
            f"`gemini` needs the function name of call `{tool_call_id}`: pass `tool_name=` "
            "(the name in the model's functionCall)"
        )
    messages = _RENDERERS[api](_Parts(text, images, result.is_error, tool_call_id, name))
    return Payload(api, tuple(messages), len(images), tuple(withheld))


@dataclass(frozen=True)
class _Parts:
    text: str
    images: tuple[ProcessedImage, ...]
    is_error: bool
    call_id: str
    tool_name: str | None


def _with_summaries(
    text: str, images: Sequence[ProcessedImage], withheld: Sequence[Withheld]
) -> str:
    """`text` plus one line per withheld image, so the model knows what it is not seeing."""
    lines = [text] if text else []
    for item in withheld:
        image = images[item.index - 1]
        kind = image.media_type.partition("/")[2].upper()
        lines.append(
            f"[image {item.index} ({image.width}x{image.height} {kind}) not sent: {item.reason}]"
        )
    return "\n".join(lines)


# -- the six shapes -----------------------------------------------------------------------------


def _data_url(image: ProcessedImage) -> str:
    return f"data:{image.media_type};base64,{image.base64}"


def _anthropic(parts: _Parts) -> list[Message]:
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


def _openai_responses(parts: _Parts) -> list[Message]:
    output: str | list[Message] = parts.text
    if parts.images:
        output = [{"type": "input_text", "text": parts.text}]
        output += [
            {"type": "input_image", "image_url": _data_url(image), "detail": "auto"}
            for image in parts.images
        ]
    return [{"type": "function_call_output", "call_id": parts.call_id, "output": output}]


def _openai_chat(parts: _Parts) -> list[Message]:
    """Tool messages take text only; images follow in a user message, as Goose and Pydantic AI
    do on Chat Completions (research §4)."""
    if not parts.images:
        return [{"role": "tool", "tool_call_id": parts.call_id, "content": parts.text}]
    count = len(parts.images)
    note = f"[{count} image(s) of this tool result follow in a user message after the tool results]"
    user: list[Message] = [
        {"type": "text", "text": f"The image(s) returned by tool call {parts.call_id}:"}
    ]
    user += [
        {"type": "image_url", "image_url": {"url": _data_url(image)}} for image in parts.images
    ]
    return [
        {"role": "tool", "tool_call_id": parts.call_id, "content": f"{parts.text}\n{note}"},
        {"role": "user", "content": user},
    ]


def _gemini(parts: _Parts) -> list[Message]:
    """`functionResponse.parts` (Gemini 3); no `$ref`/`displayName`, which 400 in practice
    (python-genai #2268, #2792)."""
    key = "error" if parts.is_error else "output"
    response: Message = {
        "id": parts.call_id,
        "name": parts.tool_name,
        "response": {key: parts.text},
    }
    if parts.images:
        response["parts"] = [
            {"inlineData": {"mimeType": image.media_type, "data": image.base64}}
            for image in parts.images
        ]
    return [{"role": "user", "parts": [{"functionResponse": response}]}]


def _bedrock(parts: _Parts) -> list[Message]:
    content: list[Message] = [{"text": parts.text}]
    content += [
        {"image": {"format": image.media_type.partition("/")[2], "source": {"bytes": image.base64}}}
        for image in parts.images
    ]
    block: Message = {"toolUseId": parts.call_id, "content": content}
    if parts.is_error:
        block["status"] = "error"
    return [{"role": "user", "content": [{"toolResult": block}]}]


def _ollama(parts: _Parts) -> list[Message]:
    """Ollama's native `/api/chat`: a `tool` message whose `images` are base64 strings. The
    API has no error flag, so an error result says so in its text."""
    text = f"Error: {parts.text}" if parts.is_error else parts.text
    message: Message = {"role": "tool", "content": text}
    if parts.tool_name:
        message["tool_name"] = parts.tool_name
    if parts.images:
        message["images"] = [image.base64 for image in parts.images]
    return [message]


_RENDERERS: Final[Mapping[str, Callable[[_Parts], list[Message]]]] = {
    "anthropic": _anthropic,
    "openai-responses": _openai_responses,
    "openai-chat": _openai_chat,
    "gemini": _gemini,
    "bedrock": _bedrock,
    "ollama": _ollama,
}


def _raw_bytes(message: Message) -> Message:
    """A Bedrock message with each image's base64 `bytes` decoded (a copy; tool results nest
    their images one level down)."""
    return {**message, "content": [_raw_block(block) for block in message.get("content", [])]}


def _raw_block(block: Message) -> Message:
    if "image" in block:
        source = block["image"]["source"]
        raw = base64.b64decode(source["bytes"])
        return {**block, "image": {**block["image"], "source": {**source, "bytes": raw}}}
    if "toolResult" in block:
        result = block["toolResult"]
        content = [_raw_block(item) for item in result.get("content", [])]
        return {**block, "toolResult": {**result, "content": content}}
    return block
