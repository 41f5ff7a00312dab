"""Provider payloads: routed results rendered as the tool-result message(s) of one API shape
(`visiongate.kernel.shapes`: `anthropic`, `openai-responses`, `openai-chat`, `gemini`, `bedrock`,
`ollama`), through one entry point that runs a last-resort guard (`_guard`) withholding
pixels a route or shape cannot take, applies the route's message rules, and amends the
decision record when it withheld more than the record says. `render_turn` renders the results
of one assistant turn together, as each API wants several tool results (`_turn`)."""

from ._guard import GUARD_PREFIX, Limits, Withheld, guard_images, limits_for, refusal
from ._render import API_NAMES, Payload, TraceSink, render_payload
from ._turn import ToolCall, render_turn

__all__ = [
    "API_NAMES",
    "GUARD_PREFIX",
    "Limits",
    "Payload",
    "ToolCall",
    "TraceSink",
    "Withheld",
    "guard_images",
    "limits_for",
    "refusal",
    "render_payload",
    "render_turn",
]
