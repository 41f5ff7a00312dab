"""Provider payloads: a routed result rendered as the tool-result message(s) of one API shape
(`anthropic`, `openai-responses`, `openai-chat`, `gemini`, `bedrock`, `ollama`), with a
last-resort guard (`_guard`) that withholds pixels a route or shape cannot take; the router
runs the same guard before it writes the decision record. `render_turn` renders the results of
one assistant turn together, as each API wants several tool results (`_turn`)."""

from ._guard import GUARD_PREFIX, Limits, Withheld, guard_images, limits_for, refusal
from ._render import API_NAMES, Payload, render_payload
from ._turn import ToolCall, merge_turn, render_turn

__all__ = [
    "API_NAMES",
    "GUARD_PREFIX",
    "Limits",
    "Payload",
    "ToolCall",
    "Withheld",
    "guard_images",
    "limits_for",
    "merge_turn",
    "refusal",
    "render_payload",
    "render_turn",
]
