"""Message-order rules a provider adds to its API shape, and what rendering does about them.

The one rule known so far is about a `user` message right after a `tool` message, which the
OpenAI Chat shape's native lane produces (its tool messages take text only, so the images
follow in a user message):

| `user_after_tool` | what the route takes                         | rendering                  |
|-------------------|----------------------------------------------|----------------------------|
| `allowed`         | a user message right after the tool messages | as the shape writes it     |
| `bridge`          | only with an `assistant` turn between them   | inserts the assistant turn |
| `refuses`         | no user message after a tool result at all   | (the route refuses images) |

Mistral answers a user message right after a tool message with `400 Unexpected role 'user'
after role 'tool'` (`invalid_request_message_order`, code 3230); its function-calling guide
has the model answer as `assistant` after the tool message, and agents insert an assistant
turn between (the registry cites both). The rule is the provider's, whichever shape it is
rendered in: shapes whose tool results carry their own images never produce the order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ._shape import Message

__all__ = ["BRIDGE_TEXT", "USER_AFTER_TOOL", "bridged", "user_after_tool_positions"]

USER_AFTER_TOOL: Final = ("allowed", "bridge", "refuses")
"""The values of a route's `user_after_tool` rule (see the module docs)."""

BRIDGE_TEXT: Final = "The tool results are above; the images they returned follow."
"""The assistant turn put between the tool messages and the user message with the images."""


def user_after_tool_positions(messages: Sequence[Message]) -> list[int]:
    """The indexes of user messages that come right after a tool message."""
    return [
        index
        for index in range(1, len(messages))
        if messages[index].get("role") == "user" and messages[index - 1].get("role") == "tool"
    ]


def bridged(messages: Sequence[Message]) -> list[Message]:
    """`messages` with an `assistant` turn before every user message that follows a tool
    message, so the order is tool -> assistant -> user."""
    positions = set(user_after_tool_positions(messages))
    out: list[Message] = []
    for index, message in enumerate(messages):
        if index in positions:
            out.append({"role": "assistant", "content": BRIDGE_TEXT})
        out.append(message)
    return out
