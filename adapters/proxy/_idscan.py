"""The `id` of a JSON-RPC message that cannot be parsed, read from its top-level object only.

A message too large to keep, nested too deeply, not UTF-8 or not JSON still deserves an answer
under its own id, and only its own: an `"id"` nested in `params` (a tool's argument, a
resource's field) belongs to somebody else, and answering it could fail another request in
flight. So this scan reads the message as a stream of pieces, tracks strings and nesting, and
looks at the keys of the top-level object only; nested values are skipped in C (a regular
expression jumps from one bracket or quote to the next, runs of brackets at once).

It is bounded: at most `budget` steps whatever the message (a step is one bracket run, string
or top-level byte), and a top-level key or value is kept only up to a few hundred bytes. The
answer is the one id found at the top level, as far as the object could be read; None (the
message is then logged and not answered) when there is none, when there are two, when the
value is no valid id, when the message is not an object (a batch), or when the budget ran out
first. It never guesses.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

__all__ = ["DEFAULT_BUDGET", "TopLevelId", "top_level_id"]

DEFAULT_BUDGET: Final = 250_000
"""Steps before the scan gives up: about a tenth of a second on this project's machines."""
_TOKEN_BYTES: Final = 512
"""The longest top-level key or value kept: longer ones are not `"id"`, nor a usable id."""
_NESTED: Final = re.compile(rb'(?:[\[{]\s*(?:"[^"\\\[\]{}]*"\s*:\s*)?)+|[\]}]+|"')
"""A run of openings (each perhaps followed by a plain key and its colon, as in
`{"a":{"a":{"a":`, so a message nested as objects is one step however deep; a key with a
quote, a backslash or a bracket is read the slow way), a run of closings, or a string."""
_WHITESPACE: Final = frozenset(b" \t\r\n")
_OPEN: Final = frozenset(b"[{")
_QUOTE: Final = 0x22
_BACKSLASH: Final = 0x5C
_DECODER: Final = msgspec.json.Decoder()


class TopLevelId:
    """A streaming scan for the top-level `id` (a `Skim` for `visiongate.kernel._framing.Lines`)."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self._budget = budget
        self._depth = 0
        self._in_string = False
        self._escaped = False
        """A backslash ended the previous piece inside a string."""
        self._token: bytearray | None = None
        """The top-level key, string value or scalar being read; None when not kept."""
        self._too_long = False
        self._expect = "key"
        self._key_is_id = False
        self._ids: list[object] = []
        self._stopped = False
        """The object ended, or could not be read further: nothing after counts."""
        self._gave_up = False

    def feed(self, piece: bytes) -> None:
        position = 0
        size = len(piece)
        while position < size and not self._stopped:
            self._budget -= 1
            if self._budget < 0:
                self._gave_up = self._stopped = True
                return
            if self._in_string:
                position = self._string(piece, position)
            elif self._depth >= 2:
                position = self._nested(piece, position)
            else:
                self._top(piece[position])
                position += 1

    def result(self) -> object:
        """The id (a string or an integer), or None; see the module docstring."""
        if self._gave_up or len(self._ids) != 1 or self._ids[0] is _INVALID:
            return None
        return self._ids[0]

    # -- inside strings and nested values -----------------------------------------------------

    def _string(self, piece: bytes, position: int) -> int:
        if self._escaped:
            self._escaped = False
            self._keep(piece[position : position + 1])
            return position + 1
        quote = piece.find(b'"', position)
        backslash = piece.find(b"\\", position, None if quote < 0 else quote)
        end = backslash if backslash >= 0 else quote
        if end < 0:
            self._keep(piece[position:])
            return len(piece)
        self._keep(piece[position : end + 1])
        if piece[end] == _BACKSLASH:
            self._escaped = True
        else:
            self._in_string = False
            if self._depth == 1:
                self._string_ended()
        return end + 1

    def _nested(self, piece: bytes, position: int) -> int:
        found = _NESTED.search(piece, position)
        if found is None:
            return len(piece)
        run = found.group()
        if run[0] == _QUOTE:
            self._in_string = True
        elif run[0] in _OPEN:
            self._depth += run.count(b"{") + run.count(b"[")  # the keys in a run have none
        else:
            closed = min(len(run), self._depth - 1)
            self._depth -= closed
            if self._depth == 1:
                self._value_ended(None)
            return found.start() + closed
        return found.end()

    # -- the top-level object, byte by byte -----------------------------------------------------

    def _top(self, byte: int) -> None:
        if byte in _WHITESPACE:
            self._scalar_ended()
        elif self._depth == 0:
            self._start(byte)
        elif byte == _QUOTE:
            self._string_started()
        elif byte in _OPEN:
            self._container_started()
        elif byte == 0x3A:  # :
            self._scalar_ended()
            self._step("colon", "value")
        elif byte == 0x2C:  # ,
            self._scalar_ended()
            self._step("comma", "key")
        elif byte == 0x7D:  # }
            self._scalar_ended()
            self._stopped = True  # the object ended
        else:
            self._scalar_byte(byte)

    def _start(self, byte: int) -> None:
        if byte == 0x7B:  # {
            self._depth = 1
        else:
            self._stopped = True  # a batch, or not JSON: no single id

    def _step(self, expected: str, then: str) -> None:
        if self._expect == expected:
            self._expect = then
        else:
            self._stopped = True

    def _string_started(self) -> None:
        if self._expect not in ("key", "value"):
            self._stopped = True
            return
        self._in_string = True
        self._token, self._too_long = bytearray(b'"'), False

    def _string_ended(self) -> None:
        if self._expect == "key":
            key = self._decoded()
            self._key_is_id = key == "id"
            self._expect = "colon"
        else:
            self._value_ended(self._decoded())

    def _container_started(self) -> None:
        if self._expect != "value":
            self._stopped = True
            return
        self._depth = 2
        self._token = None

    def _scalar_byte(self, byte: int) -> None:
        if self._expect == "value":
            self._token, self._too_long, self._expect = bytearray(), False, "scalar"
        if self._expect != "scalar":
            self._stopped = True
            return
        self._keep(bytes((byte,)))

    def _scalar_ended(self) -> None:
        if self._expect == "scalar":
            self._value_ended(self._decoded())

    def _value_ended(self, value: object) -> None:
        if self._key_is_id:
            self._ids.append(value if _is_id(value) else _INVALID)
        self._key_is_id, self._token, self._expect = False, None, "comma"

    # -- tokens ---------------------------------------------------------------------------------

    def _keep(self, data: bytes) -> None:
        if self._token is None or self._too_long:
            return
        if len(self._token) + len(data) > _TOKEN_BYTES:
            self._too_long = True
        else:
            self._token += data

    def _decoded(self) -> object:
        token, self._token = self._token, None
        if token is None or self._too_long:
            return _INVALID
        try:
            return _DECODER.decode(token)
        except (msgspec.DecodeError, UnicodeDecodeError):
            return _INVALID


_INVALID: Final = object()


def _is_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def top_level_id(message: bytes, budget: int = DEFAULT_BUDGET) -> object:
    """The top-level id of a whole message held in memory (see `TopLevelId`)."""
    scan = TopLevelId(budget)
    scan.feed(message)
    return scan.result()
