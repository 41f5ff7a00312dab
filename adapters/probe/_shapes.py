"""One probe request per API shape: a user turn, the model's tool call, and the tool result
carrying the code image exactly as the router would send it (`render_payload`).

| api                | endpoint (appended to the base URL)   | key header                  |
|--------------------|---------------------------------------|-----------------------------|
| `anthropic`        | `/v1/messages`                        | `x-api-key`                 |
| `openai-responses` | `/responses`                          | `Authorization: Bearer ...` |
| `openai-chat`      | `/chat/completions`                   | `Authorization: Bearer ...` |
| `gemini`           | `/models/<model>:generateContent`     | `x-goog-api-key`            |

The base URLs follow each vendor SDK's convention: `https://api.anthropic.com`,
`https://api.openai.com/v1`, `https://generativelanguage.googleapis.com/v1beta`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..payloads._render import Message

__all__ = ["PROBE_APIS", "PROMPT", "TOOL", "Shape", "shape_for"]

TOOL: Final = "read_screen"
CALL_ID: Final = "call_visiongate_probe"
PROMPT: Final = (
    f"Call the `{TOOL}` tool once. Its result holds an image of a short code. Reply with "
    "the code exactly as the image shows it, and nothing else. If you cannot see an image "
    "in the tool result, reply NO IMAGE."
)
_DESCRIPTION: Final = "Shows what is on the screen now."


@dataclass(frozen=True)
class Shape:
    """How one API shape is called and read."""

    api: str
    path: Callable[[str], str]
    """The endpoint path for a model, appended to the base URL."""
    key_headers: Callable[[str], dict[str, str]]
    body: Callable[[str, list[Message]], dict[str, Any]]
    """(model, tool-result messages) -> the request body."""
    reply: Callable[[Mapping[str, Any]], str]
    """The response body -> the model's text (empty when there is none)."""


def _anthropic_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"type": "tool_use", "id": CALL_ID, "name": TOOL, "input": {}}
    return {
        "model": model,
        "max_tokens": 64,
        "tools": [
            {
                "name": TOOL,
                "description": _DESCRIPTION,
                "input_schema": {"type": "object", "properties": {}},
            }
        ],
        "messages": [
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": [call]},
            *result,
        ],
    }


def _anthropic_reply(body: Mapping[str, Any]) -> str:
    content = body.get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(block.get("text", "")) for block in blocks if isinstance(block, dict)
    ).strip()


def _responses_body(model: str, result: list[Message]) -> dict[str, Any]:
    return {
        "model": model,
        "tools": [
            {
                "type": "function",
                "name": TOOL,
                "description": _DESCRIPTION,
                "parameters": {"type": "object", "properties": {}},
            }
        ],
        "input": [
            {"role": "user", "content": PROMPT},
            {"type": "function_call", "call_id": CALL_ID, "name": TOOL, "arguments": "{}"},
            *result,
        ],
    }


def _responses_reply(body: Mapping[str, Any]) -> str:
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


def _chat_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"id": CALL_ID, "type": "function", "function": {"name": TOOL, "arguments": "{}"}}
    return {
        "model": model,
        "max_tokens": 64,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": TOOL,
                    "description": _DESCRIPTION,
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        ],
        "messages": [
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            *result,
        ],
    }


def _chat_reply(body: Mapping[str, Any]) -> str:
    choices = body.get("choices") or []
    message = choices[0].get("message", {}) if choices and isinstance(choices[0], dict) else {}
    content = message.get("content") if isinstance(message, dict) else None
    return content.strip() if isinstance(content, str) else ""


def _gemini_body(model: str, result: list[Message]) -> dict[str, Any]:
    call = {"functionCall": {"id": CALL_ID, "name": TOOL, "args": {}}}
    return {
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": TOOL,
                        "description": _DESCRIPTION,
                        "parameters": {"type": "object", "properties": {}},
                    }
                ]
            }
        ],
        "contents": [
            {"role": "user", "parts": [{"text": PROMPT}]},
            {"role": "model", "parts": [call]},
            *result,
        ],
    }


def _gemini_reply(body: Mapping[str, Any]) -> str:
    candidates = body.get("candidates") or []
    first = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    parts = (first.get("content") or {}).get("parts") or []
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict)).strip()


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


_SHAPES: Final[Mapping[str, Shape]] = {
    "anthropic": Shape(
        "anthropic",
        lambda model: "/v1/messages",
        lambda key: {"x-api-key": key},
        _anthropic_body,
        _anthropic_reply,
    ),
    "openai-responses": Shape(
        "openai-responses", lambda model: "/responses", _bearer, _responses_body, _responses_reply
    ),
    "openai-chat": Shape(
        "openai-chat", lambda model: "/chat/completions", _bearer, _chat_body, _chat_reply
    ),
    "gemini": Shape(
        "gemini",
        lambda model: f"/models/{model}:generateContent",
        lambda key: {"x-goog-api-key": key},
        _gemini_body,
        _gemini_reply,
    ),
}

PROBE_APIS: Final = tuple(_SHAPES)
"""The API shapes a probe speaks."""


def shape_for(api: str) -> Shape:
    """The shape of `api`; a `ValueError` for a shape the probe does not speak."""
    found = _SHAPES.get(api)
    if found is None:
        raise ValueError(
            f"the probe does not speak api `{api}`: give `--api` with one of "
            + ", ".join(f"`{name}`" for name in PROBE_APIS)
        )
    return found
