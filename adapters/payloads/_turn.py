"""Render a whole assistant turn: the results of every tool call it made, as one API expects.

An assistant message often calls several tools at once. Rendered one result at a time, the
messages break the APIs' rules, so a turn is merged per shape:

| api                | one turn of N results                                                  |
|--------------------|------------------------------------------------------------------------|
| `anthropic`        | one user message holding the N `tool_result` blocks, in call order     |
| `openai-responses` | N `function_call_output` items (independent input items)               |
| `openai-chat`      | N `tool` messages first, then one `user` message with every image      |
| `gemini`           | one user content holding the N `functionResponse` parts                |
| `bedrock`          | one user message holding the N `toolResult` blocks                     |
| `ollama`           | N `tool` messages (native `/api/chat`)                                 |

OpenAI Chat rejects a `user` message between the `tool` replies of one assistant message
(every reply must follow the assistant message before anything else), so the images of all
results travel together after the last tool message, each labelled with its call id. Gemini
expects all of a turn's `functionResponse` parts in one content, and Anthropic all
`tool_result` blocks in one user message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, TypeAlias

from visiongate.engine.facts import ProviderRegistry

from .._routed import RoutedResult
from ._render import Message, Payload, render_payload

__all__ = ["ToolCall", "merge_turn", "render_turn", "tool_calls"]

ToolCall: TypeAlias = tuple[RoutedResult, str] | tuple[RoutedResult, str, str | None]
"""`(result, call_id)` or `(result, call_id, tool_name)`: one tool call of the turn; the name
defaults to the result's own `tool_name`."""
Merger: TypeAlias = Callable[[list[list[Message]]], list[Message]]


def tool_calls(results: Sequence[ToolCall]) -> list[tuple[RoutedResult, str, str | None]]:
    """Each call as `(result, call_id, tool_name)`; refuses an empty turn or a repeated id."""
    if not results:
        raise ValueError("a turn needs at least one tool result")
    calls = [(call[0], call[1], call[2] if len(call) > 2 else None) for call in results]
    ids = [call_id for _, call_id, _ in calls]
    repeated = next((call_id for call_id in ids if ids.count(call_id) > 1), None)
    if repeated is not None:
        raise ValueError(f"call id `{repeated}` appears twice in one turn")
    return calls


def render_turn(
    results: Sequence[ToolCall],
    api: str | None = None,
    *,
    registry: ProviderRegistry | None = None,
) -> Payload:
    """The messages answering one assistant turn's tool calls, for `api` (default: the shape
    the first result was routed for). Each result goes through the payload guard as in
    `render_payload`; `withheld` lists what every result withheld, in call order."""
    calls = tool_calls(results)
    api = api or calls[0][0].api or calls[0][0].route.api
    payloads = [
        render_payload(result, api, tool_call_id=call_id, tool_name=name, registry=registry)
        for result, call_id, name in calls
    ]
    return merge_turn(payloads)


def merge_turn(payloads: Sequence[Payload]) -> Payload:
    """One payload per result (all of one api, in call order) merged into the turn's messages."""
    api = payloads[0].api
    if any(payload.api != api for payload in payloads):
        raise ValueError("every result of a turn must be rendered for the same api")
    parts = [list(payload.messages) for payload in payloads]
    merged = _MERGERS.get(api, _concatenated)(parts)
    return Payload(
        api=api,
        messages=tuple(merged),
        images_sent=sum(payload.images_sent for payload in payloads),
        withheld=tuple(item for payload in payloads for item in payload.withheld),
    )


def _concatenated(parts: list[list[Message]]) -> list[Message]:
    return [message for messages in parts for message in messages]


def _one_user_message(key: str) -> Merger:
    """Anthropic and Bedrock: every result is one user message; their blocks become one."""

    def merge(parts: list[list[Message]]) -> list[Message]:
        blocks = [block for messages in parts for message in messages for block in message[key]]
        return [{"role": "user", key: blocks}]

    return merge


def _openai_chat(parts: list[list[Message]]) -> list[Message]:
    """Every tool message first; then one user message with each result's images."""
    tools: list[Message] = []
    images: list[Message] = []
    for messages in parts:
        tool, *follow = messages
        tools.append(tool)
        for user in follow:
            images += user["content"]
    # Each result's images come after the line that names its call id (`_render`).
    return [*tools, {"role": "user", "content": images}] if images else tools


_MERGERS: Final[Mapping[str, Merger]] = {
    "anthropic": _one_user_message("content"),
    "bedrock": _one_user_message("content"),
    "gemini": _one_user_message("parts"),
    "openai-chat": _openai_chat,
}
