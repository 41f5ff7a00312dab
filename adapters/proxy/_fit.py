"""Keep every message the proxy forwards under the client's size limit.

A routed tool result is one text block, the attached images and the blocks passed as they
came (`RoutedResult.to_mcp`), with the routed structured content for a tool that declares an
output schema. The images were fitted first, sharing what the text leaves of the limit
(`image_budget`, which counts every copy of an image: a content block and its copy in the
structured content). If the answer is still too large:

1. a large `_meta` is left out (the text carries it as a JSON line);
2. the text is cut: the proxy's own short lines (`MEDIA:` paths and `[...]` notes) are kept,
   the server's text keeps its start, and one note says how many bytes were left out and
   which file holds the whole text (written 0600 in the cache);
3. the longest strings of the structured content are cut the same way (never an image's
   base64), if the result still satisfies the tool's output schema; structured content is
   never dropped, since clients reject a result of such a tool without it. When it alone
   takes more than half the limit (a file reader's text twice) it is cut to half first, so
   the text copy keeps the other half;
4. if the text still has less than `MIN_TEXT_BYTES` of room, or the answer is still over,
   `Fitted.shortfall` says by how much, and the caller routes the result again with the
   images fitted harder (so the content and structured copies stay the same images);
5. an answer that cannot be brought under the limit at all becomes a JSON-RPC error that
   says why. No message over the limit is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._cache import ImageCache
from ..wire._inline import inline_image_chars
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
"""Below this much room for text, attached images are fitted harder."""
LARGE_FIELD_FRACTION: Final = 8
"""`_meta` over 1/8 of the limit leaves the answer when it is too large."""
_PROTECTED_CHARS: Final = 1_000
_CUT_MIN_CHARS: Final = 256
"""Strings of the structured content shorter than this are never cut."""

Check = Callable[[Any], str | None]
"""Why a structured content does not satisfy the tool's output schema, or None."""


@dataclass(frozen=True)
class Fitted:
    """The answer as sent, and what fitting it changed (for the decision record)."""

    message: bytes
    changes: Mapping[str, Any] = field(default_factory=dict)
    shortfall: int = 0
    """Bytes the attached images should give up: the text had too little room, or the answer
    did not fit at all (then `message` is the error that stands in for it)."""


def image_budget(result: Mapping[str, Any], raw_size: int, limit: int) -> int:
    """Base64 characters the result's images may share: the limit less the room the text
    needs (at most half the limit, so a huge text still leaves images their half)."""
    images, image_chars = _image_payload(result)
    text_need = max(0, raw_size - image_chars) + IMAGE_NOTE_BYTES * images
    reserve = min(text_need, limit // 2)
    return max(0, limit - ENVELOPE_BYTES - NOTE_BYTES - reserve - IMAGE_BLOCK_BYTES * images)


def _image_payload(result: Mapping[str, Any]) -> tuple[int, int]:
    """How many image-like payloads the result holds (its blocks, the structured content and
    `_meta`, at any depth), and their base64 characters."""
    count, chars = inline_image_chars(result.get("content"))
    for key in ("structuredContent", "_meta"):
        more, more_chars = inline_image_chars(result.get(key))
        count, chars = count + more, chars + more_chars
    return count, chars


def fit_call_response(
    request_id: Any,
    result: dict[str, Any],
    limit: int,
    store: ImageCache,
    check: Check | None = None,
    server_lines: frozenset[str] = frozenset(),
) -> Fitted:
    """The JSON-RPC answer carrying `result` (a routed `tools/call` result: one text block,
    then images), at most `limit` bytes. `check` validates a structured content that was cut;
    `server_lines` are the tool's own lines, never kept past a cut as the proxy's notes.
    Blocking (it may write the full text): call it in a thread."""
    changes: dict[str, Any] = {}
    message = _answer(request_id, result)
    if len(message) <= limit:
        return Fitted(message)
    result = _without_large_meta(result, limit, changes)
    message = _answer(request_id, result)
    shortfall = 0
    structured = result.get("structuredContent")
    half = limit // 2
    if len(message) > limit and structured is not None and len(encode(structured)) > half:
        # Both copies too large (a file reader's text twice): each keeps half the room, so
        # the model reads the start of the text whichever copy its client hands it.
        over = len(encode(structured)) - half
        result = _with_structured_cut(result, over, limit, store, changes, check)
        message = _answer(request_id, result)
    if len(message) > limit:
        result, shortfall = _with_text_cut(
            result, len(message), limit, store, changes, server_lines
        )
        message = _answer(request_id, result)
    if len(message) > limit and result.get("structuredContent") is not None:
        result = _with_structured_cut(result, len(message) - limit, limit, store, changes, check)
        message = _answer(request_id, result)
    if len(message) > limit:
        changes["refused"] = f"{len(message)} bytes even after cutting"
        error = over_limit_error(request_id, "tools/call", len(message), limit, _why(result))
        return Fitted(error, changes, max(shortfall, len(message) - limit + MIN_TEXT_BYTES))
    changes["bytes"] = len(message)
    return Fitted(message, changes, shortfall)


def _why(result: Mapping[str, Any]) -> str:
    content = result.get("content") or []
    images = sum(
        1 for block in content if isinstance(block, Mapping) and block.get("type") != "text"
    )
    parts = [f"{images} image or audio block(s)"] if images else []
    if result.get("structuredContent") is not None:
        parts.append("the structured content the tool's output schema requires")
    return " and ".join(parts)


def _answer(request_id: Any, result: Mapping[str, Any]) -> bytes:
    return encode({"jsonrpc": "2.0", "id": request_id, "result": result})


def _without_large_meta(
    result: dict[str, Any], limit: int, changes: dict[str, Any]
) -> dict[str, Any]:
    if "_meta" in result and len(encode(result["_meta"])) > limit // LARGE_FIELD_FRACTION:
        changes["fields_left_out"] = ["_meta"]
        return {key: value for key, value in result.items() if key != "_meta"}
    return result


def _with_text_cut(
    result: dict[str, Any],
    size: int,
    limit: int,
    store: ImageCache,
    changes: dict[str, Any],
    server_lines: frozenset[str],
) -> tuple[dict[str, Any], int]:
    """`result` with its text cut to the room the rest leaves, and how many bytes the images
    should give up for the text to keep `MIN_TEXT_BYTES` (0 when it has them)."""
    content = list(result.get("content") or [])
    text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
    others = size - len(encode(text))
    room = limit - others - 2
    shortfall = max(0, MIN_TEXT_BYTES + NOTE_BYTES - room) if len(content) > 1 else 0
    saved = store.write(text.encode("utf-8"), None, extension=".txt")
    note = lambda n: _note(n, limit, str(saved.path))  # noqa: E731  # one line, used once
    kept, left_out = cut_with_note(text, max(0, room), note, server_lines)
    changes.update(text_chars=len(text), text_bytes_left_out=left_out, text_path=str(saved.path))
    content[0] = {**content[0], "text": kept}
    return {**result, "content": content}, shortfall


def _note(left_out: int, limit: int, path: str) -> str:
    return (
        f"[visiongate: this result was cut to fit the client's limit of {limit:,} bytes per "
        f"message: {left_out:,} bytes of its text were left out; the full text is in the file "
        f"{path}]"
    )


def cut_with_note(
    text: str, room: int, note: Callable[[int], str], server_lines: frozenset[str] = frozenset()
) -> tuple[str, int]:
    """`text` cut into `room` JSON bytes with `note(bytes left out)` where it was cut, and the
    number of UTF-8 bytes left out. The note is sized for the most that could be left out, so
    the real one (never longer) fits. `server_lines`: see `cut_text`."""
    total = len(text.encode("utf-8"))
    marker = note(total)
    kept = cut_text(text, room, marker, server_lines)
    joined = f"\n{marker}" if f"\n{marker}" in kept else marker
    left_out = max(0, total - len(kept.replace(joined, "", 1).encode("utf-8")))
    return kept.replace(marker, note(left_out), 1), left_out


def _with_structured_cut(
    result: dict[str, Any],
    over: int,
    limit: int,
    store: ImageCache,
    changes: dict[str, Any],
    check: Check | None,
) -> dict[str, Any]:
    """`result` with the longest strings of its structured content cut until it is `over`
    bytes smaller, if the cut content still satisfies the output schema (`check`)."""
    structured = result["structuredContent"]
    saved = changes.get("structured_path") or str(
        store.write(encode(structured), None, extension=".json").path
    )  # the first cut saves the whole value; a second cut keeps that file
    cut, left_out = structured, changes.get("structured_bytes_left_out", 0)
    for path, value in sorted(_cuttable(structured), key=lambda item: -len(item[1])):
        if over <= 0:
            break
        room = max(0, _json_size(value) - over - NOTE_BYTES)
        shorter, dropped = cut_with_note(value, room, lambda n: _value_note(n, limit, saved))
        over -= _json_size(value) - _json_size(shorter)
        left_out += dropped
        cut = _replaced(cut, path, shorter)
    problem = check(cut) if check is not None else None
    if problem is not None:
        changes["structured_cut_refused"] = problem
        return result
    changes.update(structured_bytes_left_out=left_out, structured_path=saved)
    return {**result, "structuredContent": cut}


def _value_note(left_out: int, limit: int, path: str) -> str:
    return (
        f"[visiongate: {left_out:,} bytes of this value were left out to fit the client's "
        f"limit of {limit:,} bytes per message; the full structured content is in the file "
        f"{path}]"
    )


def _cuttable(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """Long strings that are text: not base64, not a data URL (an image cut in half is no
    image)."""
    if isinstance(value, str):
        text = len(value) >= _CUT_MIN_CHARS and not value.startswith("data:")
        return [(path, value)] if text and any(char in value for char in " \n\t") else []
    if isinstance(value, Mapping):
        return [found for key, item in value.items() for found in _cuttable(item, (*path, key))]
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _cuttable(item, (*path, i))]
    return []


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        return {**value, head: _replaced(value[head], rest, new)}
    items = list(value)
    items[head] = _replaced(items[head], rest, new)
    return items


def cut_text(text: str, room: int, note: str, server_lines: frozenset[str] = frozenset()) -> str:
    """`text` in at most `room` JSON bytes (the note included): the proxy's own short lines
    (`MEDIA:` paths, `[...]` notes) are kept where they are, the server's text keeps its
    start, and `note` stands where the cut is. If even the short lines do not fit, nothing is
    protected. A line in `server_lines` (the tool's own text) is never taken for one of the
    proxy's, whatever it starts with (a log's `[INFO]` lines stayed past the cut)."""
    lines = text.split("\n")
    sizes = [_json_size(line) + 2 for line in lines]  # `\n` costs two bytes in JSON
    protected = [
        len(line) <= _PROTECTED_CHARS and _ours(line) and line not in server_lines for line in lines
    ]
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


def over_limit_error(
    request_id: Any, method: str, size: int, limit: int, holding: str = ""
) -> bytes:
    """The JSON-RPC error that stands in for an answer the client could not take; `holding`
    says what could not be cut further."""
    why = f": even with its text cut, {holding} do not fit" if holding else ""
    return error_response(
        request_id,
        INTERNAL_ERROR,
        f"visiongate proxy: the MCP server's `{method}` answer of {size:,} bytes is over the "
        f"client's limit of {limit:,} bytes per message (--max-result-bytes){why}",
    )
