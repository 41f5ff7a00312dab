"""A POST's body as the gateway reads it before its session's transport does: read whole up to
`--max-request-bytes` and decoded once to say what is wrong with
it (not JSON, too deep, a batch, no message, an id that is no id) before anything else."""

from __future__ import annotations

from typing import Any

from starlette.types import Receive

from ..proxy._jsonrpc import INVALID_REQUEST, PARSE_ERROR, TOO_DEEP, id_key, parse_value
from ..sanitize._line import untrusted_line

__all__ = ["read_body", "read_message"]


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None past `limit` bytes (nothing more is read then)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        event = await receive()
        if event["type"] != "http.request":
            break
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not event.get("more_body", False):
            break
    return b"".join(chunks)


def read_message(body: bytes) -> tuple[Any, tuple[int, str] | None]:
    """A POST body, decoded once: its JSON-RPC message as a dict, for its kind and id (None
    when it is no object; the transport parses it again), and why it is not one JSON-RPC
    message (an error code and a sentence), or None.

    The second is asked before anything else about the POST, so a client without a session
    hears what is wrong with its body rather than only that it lacks a session id, and one
    with a session hears the same words (not the transport's validation dump); the session
    goes on."""
    value, messages = parse_value(body)
    message = value if isinstance(value, dict) else None
    problem = messages[0].problem if len(messages) == 1 and messages[0].kind == "invalid" else ""
    if problem.startswith("not JSON") or problem == TOO_DEEP:
        return message, (PARSE_ERROR, f"the body is {untrusted_line(problem, 200)}")
    if isinstance(value, list):
        return message, (
            INVALID_REQUEST,
            "the body is a JSON-RPC batch (an array); MCP takes one message per POST since "
            "protocol version 2025-06-18",
        )
    if problem:
        return message, (INVALID_REQUEST, f"the body is {untrusted_line(problem, 200)}")
    if message is not None and not _valid_id(message):
        return message, (
            INVALID_REQUEST,
            "the message's `id` must be a string or an integer (JSON-RPC 2.0; MCP allows no other)",
        )
    return message, None


def _valid_id(message: dict[str, Any]) -> bool:
    """No `id`, or one a JSON-RPC peer may give (`null` is left to the transport, which
    reads it as JSON-RPC does); an object, an array, `true` or a fraction is no id."""
    request_id = message.get("id")
    return request_id is None or id_key(request_id) is not None
