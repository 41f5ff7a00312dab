"""JSON-RPC messages as the relay sees them: newline-framed bytes, parsed once, forwarded as read.

The relay parses each line (msgspec, a few microseconds for a small message) to learn its kind,
`method` and `id`; a message it does not change is forwarded as the bytes it came in, never
re-encoded. A line longer than the limit is skipped to its end without being kept in memory
(its first bytes are kept, to find its `id` and answer it); it never ends the session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "REQUEST_TIMEOUT",
    "UPSTREAM_CLOSED",
    "IdKey",
    "Lines",
    "Message",
    "Oversized",
    "encode",
    "error_response",
    "id_key",
    "notification",
    "parse",
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

_HEAD_BYTES: Final = 512
_ID_PATTERN: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
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
    try:
        value = _DECODER.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        return [Message(raw, {"id": sniff_id(raw)}, "invalid", f"not JSON ({error})")]
    if isinstance(value, list) and value:
        return [_classify(encode(item), item) for item in value]
    return [_classify(raw, value)]


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


def sniff_id(head: bytes) -> Any:
    """The `id` found in the first bytes of a message that could not be parsed, or None."""
    found = _ID_PATTERN.search(head[:_HEAD_BYTES])
    if found is None:
        return None
    try:
        return _DECODER.decode(found.group(1))
    except msgspec.DecodeError:
        return None


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode({"jsonrpc": "2.0", "id": request_id, "error": error})


def notification(method: str, params: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method, "params": dict(params)})


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line past the size limit, skipped: how long it was and its first bytes."""

    size: int
    head: bytes


class Lines:
    """Newline-framed lines from chunks, each at most `limit` bytes; linear time and memory.

    A longer line is not kept: its first bytes are, the rest is skipped up to its newline, and
    it comes out as `Oversized`."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._skipping = False
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._keep(chunk[start:end])
            out.append(self._finish())
            start = end + 1
        self._keep(chunk[start:])
        return out

    def _keep(self, piece: bytes) -> None:
        if not self._skipping and self._size + len(piece) > self._limit:
            self._head = (b"".join(self._pieces) + piece[:_HEAD_BYTES])[:_HEAD_BYTES]
            self._pieces, self._skipping = [], True
        elif not self._skipping and piece:
            self._pieces.append(piece)
        self._size += len(piece)

    def _finish(self) -> bytes | Oversized:
        if self._skipping:
            done: bytes | Oversized = Oversized(self._size, self._head)
        else:
            done = b"".join(self._pieces)
        self._pieces, self._size, self._skipping, self._head = [], 0, False, b""
        return done
