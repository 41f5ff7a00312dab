"""JSON-RPC messages as the relay sees them: newline-framed bytes, parsed once, forwarded as read.

The relay parses each line (msgspec, a few microseconds for a small message) to learn its kind,
`method` and `id`; a message it does not change is forwarded as the bytes it came in, never
re-encoded. Lines come from `visiongate.kernel._framing.Lines`: one longer than the limit is skipped
to its end without being kept in memory, and comes out as `Oversized` with the id a bounded
scan of its top-level object found (`_idscan`); it never ends the session.

Parsing is bounded in depth as well as size: a message nested more than `MAX_DEPTH` levels
deep is refused whole, on any Python (msgspec's own limit follows the interpreter's C stack
and differs between versions), so nothing after the parser recurses without bound. A message
that is not JSON, not UTF-8 or too deep is answered under the id of its top-level object
(never one nested in its params), or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from ._idscan import top_level_id

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "MAX_DEPTH",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "TOO_DEEP",
    "UPSTREAM_CLOSED",
    "IdKey",
    "Message",
    "encode",
    "error_response",
    "id_key",
    "notification",
    "parse",
    "parse_value",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INTERNAL_ERROR: Final = -32603
UPSTREAM_CLOSED: Final = -32000
"""The SDKs' `CONNECTION_CLOSED`."""
REQUEST_TIMEOUT: Final = -32001
"""The SDKs' `REQUEST_TIMEOUT`."""

Kind = Literal["request", "notification", "response", "invalid"]
IdKey = tuple[bool, int | str]
"""An id as a dict key: `1` and `"1"` are different requests."""

MAX_DEPTH: Final = 100
"""The deepest nesting accepted in a message (objects and arrays, the message itself is 1)."""
_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder()


def encode(value: Any) -> bytes:
    return _ENCODER.encode(value)


def id_key(value: Any) -> IdKey | None:
    """The key of a JSON-RPC id (a string or an integer), None for anything else."""
    if isinstance(value, str):
        return (True, value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (False, value)
    return None


@dataclass(frozen=True, slots=True)
class Message:
    """One JSON-RPC message: its bytes as read and its parsed body."""

    raw: bytes
    body: Mapping[str, Any]
    kind: Kind
    problem: str = ""
    """Why an `invalid` message is not a JSON-RPC message."""

    @property
    def method(self) -> str:
        method = self.body.get("method")
        return method if isinstance(method, str) else ""

    @property
    def id(self) -> Any:
        return self.body.get("id")

    @property
    def key(self) -> IdKey | None:
        return id_key(self.body.get("id"))

    @property
    def params(self) -> Mapping[str, Any]:
        params = self.body.get("params")
        return params if isinstance(params, Mapping) else {}


def parse(raw: bytes) -> list[Message]:
    """The messages of one line: one, several for a batch (each handled on its own), or one
    `invalid` message saying why (with the body, when it was JSON)."""
    return parse_value(raw)[1]


def parse_value(raw: bytes) -> tuple[Any, list[Message]]:
    """`parse`, with the JSON value it decoded (None when `raw` is not JSON, or too deep to
    decode): for a caller that reads the value too, so `raw` is decoded once."""
    try:
        value = _DECODER.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        return None, [_unparsed(raw, f"not JSON ({error})")]
    except RecursionError:
        return None, [_unparsed(raw, TOO_DEEP)]
    if _deeper_than(raw, value, MAX_DEPTH):
        return value, [_unparsed(raw, TOO_DEEP)]
    if isinstance(value, list) and value:
        return value, [_classify(encode(item), item) for item in value]
    return value, [_classify(raw, value)]


TOO_DEEP: Final = f"nested more than {MAX_DEPTH} levels deep"


def _unparsed(raw: bytes, problem: str) -> Message:
    return Message(raw, {"id": top_level_id(raw)}, "invalid", problem)


def _deeper_than(raw: bytes, value: Any, limit: int) -> bool:
    """Whether `value` nests more than `limit` containers deep. Counting the brackets in the
    bytes (in C) settles almost every message; the rest are walked with an explicit stack."""
    if len(raw) <= limit or raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _classify(raw: bytes, value: Any) -> Message:
    if not isinstance(value, dict):
        return Message(raw, {}, "invalid", "not a JSON-RPC message (not an object)")
    has_id = "id" in value and id_key(value["id"]) is not None
    if value.get("jsonrpc") != "2.0":
        return Message(raw, value, "invalid", 'not a JSON-RPC message (no "jsonrpc": "2.0")')
    if isinstance(value.get("method"), str):
        return Message(raw, value, "request" if has_id else "notification")
    if has_id and ("result" in value) != ("error" in value):
        return Message(raw, value, "response")
    return Message(raw, value, "invalid", "neither a request, a notification nor a response")


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def notification(method: str, params: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method, "params": dict(params)})
