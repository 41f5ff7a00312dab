"""One decision record as one trace line: UTF-8 JSON whose only line break is the final `\\n`.

Records carry strings that came from tool servers, and a reader that splits with
`str.splitlines()` also breaks at U+0085 (NEL), U+2028 and U+2029. JSON encoders escape the
C0 controls (`\\r`, VT, FF, U+001C-U+001E) but write those three raw, so they are escaped here:
a trace line then reads as one line under any Unicode line-breaking rule.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import msgspec

# The UTF-8 forms of NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR and their JSON escapes. UTF-8
# is self-synchronizing, so these byte sequences occur only as these characters.
_RAW_SEPARATORS: Final = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)


@functools.cache  # one encoder, made on the first record: a decision without a trace needs none
def _encoder() -> msgspec.json.Encoder:
    import msgspec

    return msgspec.json.Encoder(enc_hook=str)


TraceSink = Callable[[dict[str, Any]], None]
"""Anything that receives decision records: a `JsonlTrace`, an `OtelTrace`, a function."""


def format_timestamp(seconds: float) -> str:
    """RFC 3339 in UTC with microseconds, e.g. `2026-11-30T09:41:00.123456Z`."""
    # Imported here: a `decide` that prints no record has no use for `datetime` (2 ms, issue
    # 37); the import of a loaded module costs a record no measurable time.
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def encode_line(record: dict[str, Any]) -> bytes:
    """The record as one line of JSON ending in `\\n` (values JSON cannot hold become text)."""
    try:
        data = _encoder().encode(record)
    except (UnicodeEncodeError, TypeError, ValueError, OverflowError):
        data = _fallback(record)
    if not data.isascii():
        for raw, escaped in _RAW_SEPARATORS:
            data = data.replace(raw, escaped)
    return data + b"\n"


def _fallback(record: dict[str, Any]) -> bytes:
    """The slow path for what msgspec refuses: lone surrogates (from `\\ud800` escapes in a
    server's JSON) become `\\udXXX` escapes; NaN and infinities become null."""
    text = json.dumps(_finite(record), ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8", "backslashreplace")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value
