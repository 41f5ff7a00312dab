"""Render a whole assistant turn: the results of every tool call it made, as one API expects.

An assistant message often calls several tools at once. Rendered one result at a time, the
messages break the APIs' rules, so a turn is merged by its shape (`visiongate.kernel.shapes`):

| api                | one turn of N results                                                  |
|--------------------|------------------------------------------------------------------------|
| `anthropic`        | one user message holding the N `tool_result` blocks, in call order     |
| `openai-responses` | N `function_call_output` items (independent input items)               |
| `openai-chat`      | N `tool` messages first, then one `user` message with every image      |
| `gemini`           | one user content holding the N `functionResponse` parts                |
| `bedrock`          | one user message holding the N `toolResult` blocks                     |
| `ollama`           | N `tool` messages (native `/api/chat`)                                 |

A route whose provider rejects a `user` message right after a `tool` message (Mistral) gets
an `assistant` turn between the tool messages and the images. Records are amended as by
`render_payload`: rendering goes through the same entry point (`_render.render`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from visiongate.engine.facts import ProviderRegistry

from .._routed import RoutedResult
from ._render import Payload, TraceSink, render

__all__ = ["ToolCall", "render_turn", "tool_calls"]

ToolCall: TypeAlias = tuple[RoutedResult, str] | tuple[RoutedResult, str, str | None]
"""`(result, call_id)` or `(result, call_id, tool_name)`: one tool call of the turn; the name
defaults to the result's own `tool_name`."""


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
    trace: TraceSink | None = None,
) -> Payload:
    """The messages answering one assistant turn's tool calls, for `api` (default: the shape
    the first result was routed for). Each result goes through the payload guard as in
    `render_payload`; `withheld` lists what every result withheld, in call order, and an
    amended record is written to `trace` (default: each result's own sink)."""
    return render(tool_calls(results), api, registry=registry, trace=trace)
