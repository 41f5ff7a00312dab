"""Keep every message the proxy forwards under the client's size limit.

A routed tool result is one text block and the attached images (`RoutedResult.to_mcp`). The
images were fitted first, sharing what the text leaves of the limit (`image_budget`); if the
answer is still too large, the text is cut: the proxy's own short lines (`MEDIA:` paths and
`[...]` notes) are kept, the server's text keeps its start, and one note says how much was
left out and which file holds the whole text (written 0600 in the cache). Structured content
and `_meta` that are large go first: the text carries both as JSON lines, and is cut with them.
Images are dropped (last first) only if the text still has no room; an answer that cannot be
brought under the limit at all becomes a JSON-RPC error. No message over the limit is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._cache import ImageCache
from ._jsonrpc import INTERNAL_ERROR, encode, error_response

__all__ = ["Fitted", "cut_text", "fit_call_response", "image_budget", "over_limit_error"]

ENVELOPE_BYTES: Final = 512
"""JSON-RPC envelope, keys and block types around a result's text and images."""
NOTE_BYTES: Final = 600
"""Room kept for the note on a cut text (its numbers and the file path)."""
IMAGE_NOTE_BYTES: Final = 400
"""Per image: the `MEDIA:` line and the note on what was attached."""
IMAGE_BLOCK_BYTES: Final = 64
"""Per image block: its keys, type and media type."""
MIN_TEXT_BYTES: Final = 4_096
"""Below this much room for text, attached images give theirs up (last first)."""
LARGE_FIELD_FRACTION: Final = 8
"""Structured content or `_meta` over 1/8 of the limit leaves the answer when it is too large."""
_PROTECTED_CHARS: Final = 1_000


@dataclass(frozen=True)
class Fitted:
    """The answer as sent, and what fitting it changed (for the decision record)."""

    message: bytes
    changes: Mapping[str, Any] = field(default_factory=dict)


def image_budget(result: Mapping[str, Any], raw_size: int, limit: int) -> int:
    """Base64 characters the result's images may share: the limit less the room the text
    needs (at most half the limit, so a huge text still leaves images their half)."""
    images, image_chars = _image_payload(result)
    text_need = max(0, raw_size - image_chars) + IMAGE_NOTE_BYTES * images
    reserve = min(text_need, limit // 2)
    return max(0, limit - ENVELOPE_BYTES - NOTE_BYTES - reserve - IMAGE_BLOCK_BYTES * images)


def _image_payload(result: Mapping[str, Any]) -> tuple[int, int]:
    """How many image-like payloads the result holds, and their base64 characters."""
    count = chars = 0
    content = result.get("content")
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        data = block.get("data")
        resource = block.get("resource")
        if block.get("type") == "image" and isinstance(data, str):
            count, chars = count + 1, chars + len(data)
        elif isinstance(resource, Mapping) and isinstance(resource.get("blob"), str):
            count, chars = count + 1, chars + len(resource["blob"])
    return count, chars


def fit_call_response(
    request_id: Any, result: dict[str, Any], limit: int, store: ImageCache
) -> Fitted:
    """The JSON-RPC answer carrying `result` (a routed `tools/call` result: one text block,
    then images), at most `limit` bytes. Blocking (it may write the full text): call it in a
    thread."""
    changes: dict[str, Any] = {}
    message = _answer(request_id, result)
    if len(message) <= limit:
        return Fitted(message)
    result = _without_large_fields(result, limit, changes)
    message = _answer(request_id, result)
    if len(message) > limit:
        result = _with_text_cut(request_id, result, len(message), limit, store, changes)
        message = _answer(request_id, result)
    if len(message) > limit:
        changes["refused"] = f"{len(message)} bytes even after cutting"
        return Fitted(over_limit_error(request_id, "tools/call", len(message), limit), changes)
    changes["bytes"] = len(message)
    return Fitted(message, changes)


def _answer(request_id: Any, result: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "result": result})


def _without_large_fields(
    result: dict[str, Any], limit: int, changes: dict[str, Any]
) -> dict[str, Any]:
    trimmed = dict(result)
    for key in ("structuredContent", "_meta"):
        if key in trimmed and len(encode(trimmed[key])) > limit // LARGE_FIELD_FRACTION:
            del trimmed[key]
            changes.setdefault("fields_left_out", []).append(key)
    return trimmed


def _with_text_cut(
    request_id: Any,
    result: dict[str, Any],
    size: int,
    limit: int,
    store: ImageCache,
    changes: dict[str, Any],
) -> dict[str, Any]:
    content = list(result.get("content") or [])
    text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
    others = size - len(encode(text))
    while len(content) > 1 and limit - others - NOTE_BYTES < MIN_TEXT_BYTES:
        dropped = content.pop()
        others -= len(encode(dropped)) + 1
        changes["images_dropped"] = changes.get("images_dropped", 0) + 1
    saved = store.write(text.encode("utf-8"), None, extension=".txt")
    note = _note(changes.get("images_dropped", 0), limit, str(saved.path))
    kept = cut_text(text, max(0, limit - others - 2), note)
    changes.update(
        text_chars=len(text), text_chars_kept=len(kept) - len(note), text_path=str(saved.path)
    )
    content[0] = {**content[0], "text": kept}
    return {**result, "content": content}


def _note(images_dropped: int, limit: int, path: str) -> str:
    dropped = (
        f"; {images_dropped} attached image(s) were dropped too (their MEDIA: lines stay)"
        if images_dropped
        else ""
    )
    return (
        f"[visiongate: this result was cut to fit the client's limit of {limit:,} bytes per "
        f"message{dropped}; the full text is in the file {path}]"
    )


def cut_text(text: str, room: int, note: str) -> str:
    """`text` in at most `room` JSON bytes (the note included): the proxy's own short lines
    (`MEDIA:` paths, `[...]` notes) are kept where they are, the server's text keeps its
    start, and `note` stands where the cut is. If even the short lines do not fit, nothing is
    protected."""
    lines = text.split("\n")
    sizes = [_json_size(line) + 2 for line in lines]  # `\n` costs two bytes in JSON
    protected = [len(line) <= _PROTECTED_CHARS and _ours(line) for line in lines]
    fixed = sum(size for size, keep in zip(sizes, protected, strict=True) if keep)
    if fixed > room - _json_size(note):
        protected = [False] * len(lines)
        fixed = 0
    return _kept(lines, sizes, protected, room - fixed - _json_size(note) - 2, note)


def _kept(lines: list[str], sizes: list[int], protected: list[bool], budget: int, note: str) -> str:
    kept: list[str] = []
    cut = False
    for line, size, keep in zip(lines, sizes, protected, strict=True):
        if keep:
            kept.append(line)
        elif not cut and size <= budget:
            kept.append(line)
            budget -= size
        elif not cut:
            head = _head(line, budget - 2)
            kept += [head, note] if head else [note]
            cut = True
    if not cut:
        kept.append(note)
    return "\n".join(kept)


def _ours(line: str) -> bool:
    return line.startswith(("[", "MEDIA:"))


def _json_size(text: str) -> int:
    return len(encode(text)) - 2


def _head(line: str, budget: int) -> str:
    """The longest start of `line` whose JSON form takes at most `budget` bytes."""
    if budget <= 0:
        return ""
    low, high = 0, min(len(line), budget)
    while low < high:
        middle = (low + high + 1) // 2
        if _json_size(line[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return line[:low]


def over_limit_error(request_id: Any, method: str, size: int, limit: int) -> bytes:
    """The JSON-RPC error that stands in for an answer the client could not take."""
    return error_response(
        request_id,
        INTERNAL_ERROR,
        f"visiongate proxy: the MCP server's `{method}` answer of {size:,} bytes is over the "
        f"client's limit of {limit:,} bytes per message (--max-result-bytes)",
    )
