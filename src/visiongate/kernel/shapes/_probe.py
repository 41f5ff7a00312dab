"""What every probe request says: one user turn asking for the code in the tool's image."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CALL_ID", "DESCRIPTION", "PROMPT", "TOOL", "empty_parameters", "messages_body"]

TOOL: Final = "read_screen"
CALL_ID: Final = "call_visiongate_probe"
PROMPT: Final = (
    f"Call the `{TOOL}` tool once. Its result holds an image of a short code. Reply with "
    "the code exactly as the image shows it, and nothing else. If you cannot see an image "
    "in the tool result, reply NO IMAGE."
)
DESCRIPTION: Final = "Shows what is on the screen now."


def empty_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


def messages_body(
    model: str, tool: dict[str, Any], call: dict[str, Any], result: list[dict[str, Any]]
) -> dict[str, Any]:
    """A messages-API request (Anthropic, OpenAI Chat): the prompt, the model's call of the
    tool (`call`, the assistant message), then the tool result being probed."""
    return {
        "model": model,
        "max_tokens": 64,
        "tools": [tool],
        "messages": [{"role": "user", "content": PROMPT}, call, *result],
    }
