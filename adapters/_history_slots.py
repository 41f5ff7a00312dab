"""Where the images are in a conversation of each API shape, and how one becomes a note.

A conversation is the list an agent sends: Anthropic or Bedrock messages, OpenAI Chat
messages, Responses input items, Gemini contents, Ollama messages. `find_slots` walks a copy
of it and returns every image in document order (oldest first) with what replacing it by a
note means in that shape:

| api                | an image                                   | becomes                      |
|--------------------|--------------------------------------------|------------------------------|
| `anthropic`        | `image` block (also inside `tool_result`)  | a `text` block               |
| `openai-chat`      | `image_url` part                           | a `text` part                |
| `openai-responses` | `input_image` part (messages, tool output) | an `input_text` part         |
| `gemini`           | `inlineData` part                          | a `text` part                |
|                    | `functionResponse.parts[].inlineData`      | removed; note in `response`  |
| `bedrock`          | `image` block (also inside `toolResult`)   | a `text` block               |
| `ollama`           | an entry of the message's `images`         | removed; note in `content`   |

Gemini's `functionResponse.parts` take media only, and Ollama's `images` are bare base64
strings, so there the image goes and the note joins the text next to it.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["Edits", "Slot", "find_slots"]

Message = dict[str, Any]
Replace = Callable[[str, "Edits"], None]
_REMOVED: Final = object()


@dataclass
class Edits:
    """Replacements made on the copy; list entries to drop are swept at the end, so the
    positions of the other slots do not move while notes are written in document order."""

    lists: dict[int, list[Any]] = field(default_factory=dict)

    def remove(self, container: list[Any], index: int) -> None:
        container[index] = _REMOVED
        self.lists[id(container)] = container

    def sweep(self) -> None:
        for container in self.lists.values():
            container[:] = [item for item in container if item is not _REMOVED]


@dataclass(frozen=True)
class Slot:
    """One image in the conversation."""

    data: str | bytes | None
    """Base64 text, raw bytes (boto3's Bedrock form), or None for an image given by URL."""
    replace: Replace
    """Replace the image by a note (on the copy)."""

    @functools.cached_property
    def sha256(self) -> str | None:
        """Computed once: a history pass asks for it per repeat count and per note (the
        base64 decode of a screenshot costs more than the rest of the pass)."""
        raw = self.raw_bytes()
        return hashlib.sha256(raw).hexdigest() if raw is not None else None

    @property
    def key(self) -> str:
        """Content identity, for counting repeats; a URL image is its own."""
        return self.sha256 or f"unreadable:{id(self)}"

    def raw_bytes(self) -> bytes | None:
        if isinstance(self.data, bytes):
            return self.data
        if isinstance(self.data, str):
            try:
                return base64.b64decode(self.data, validate=False)
            except (binascii.Error, ValueError):
                # Not base64: counted as an image all the same, named by no path.
                return None
        return None


def find_slots(conversation: list[Message], api: str) -> list[Slot]:
    finder = _FINDERS.get(api)
    if finder is None:
        raise ValueError(f"unknown api `{api}`: expected one of {', '.join(_FINDERS)}")
    return list(finder(conversation))


def _swap(container: list[Any], index: int, make: Callable[[str], Any]) -> Replace:
    def replace(note: str, edits: Edits) -> None:
        container[index] = make(note)

    return replace


def _dicts(items: list[Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    return ((i, item) for i, item in enumerate(items) if isinstance(item, dict))


def _list(value: Any) -> list[Any]:
    """`value` when it is a list (edited in place on the copy), else an empty one."""
    return value if isinstance(value, list) else []


def _data_url(url: Any) -> str | None:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        return url.partition(";base64,")[2]
    return None


# -- the shapes --------------------------------------------------------------------------------


def _anthropic(conversation: list[Message]) -> Iterator[Slot]:
    for _, message in _dicts(conversation):
        yield from _anthropic_blocks(_list(message.get("content")))


def _anthropic_blocks(blocks: list[Any]) -> Iterator[Slot]:
    for i, block in _dicts(blocks):
        if block.get("type") == "image":
            source = block.get("source") or {}
            data = source.get("data") if source.get("type") == "base64" else None
            yield Slot(data, _swap(blocks, i, lambda note: {"type": "text", "text": note}))
        elif block.get("type") == "tool_result":
            yield from _anthropic_blocks(_list(block.get("content")))


def _openai_chat(conversation: list[Message]) -> Iterator[Slot]:
    for _, message in _dicts(conversation):
        parts = _list(message.get("content"))
        for i, part in _dicts(parts):
            if part.get("type") == "image_url":
                url = part.get("image_url")
                url = url.get("url") if isinstance(url, dict) else url
                text_part = _swap(parts, i, lambda note: {"type": "text", "text": note})
                yield Slot(_data_url(url), text_part)


def _openai_responses(conversation: list[Message]) -> Iterator[Slot]:
    for _, item in _dicts(conversation):
        for key in ("content", "output"):
            parts = _list(item.get(key))
            for i, part in _dicts(parts):
                if part.get("type") == "input_image":
                    text_part = _swap(parts, i, lambda note: {"type": "input_text", "text": note})
                    yield Slot(_data_url(part.get("image_url")), text_part)


def _gemini(conversation: list[Message]) -> Iterator[Slot]:
    for _, content in _dicts(conversation):
        parts = _list(content.get("parts"))
        for i, part in _dicts(parts):
            inline = part.get("inlineData") or part.get("inline_data")
            if isinstance(inline, dict):
                yield Slot(inline.get("data"), _swap(parts, i, lambda note: {"text": note}))
            response = part.get("functionResponse") or part.get("function_response")
            if isinstance(response, dict):
                yield from _gemini_response_parts(response)


def _gemini_response_parts(response: dict[str, Any]) -> Iterator[Slot]:
    parts = _list(response.get("parts"))
    for i, part in _dicts(parts):
        inline = part.get("inlineData") or part.get("inline_data")
        if isinstance(inline, dict):
            yield Slot(inline.get("data"), _in_response(response, parts, i))


def _in_response(response: dict[str, Any], parts: list[Any], index: int) -> Replace:
    def replace(note: str, edits: Edits) -> None:
        edits.remove(parts, index)
        body = response.get("response")
        body = dict(body) if isinstance(body, dict) else {}
        key = "output" if isinstance(body.get("output"), str) else "note"
        body[key] = f"{body[key]}\n{note}" if isinstance(body.get(key), str) else note
        response["response"] = body

    return replace


def _bedrock(conversation: list[Message]) -> Iterator[Slot]:
    for _, message in _dicts(conversation):
        yield from _bedrock_blocks(_list(message.get("content")))


def _bedrock_blocks(blocks: list[Any]) -> Iterator[Slot]:
    for i, block in _dicts(blocks):
        image = block.get("image")
        if isinstance(image, dict):
            data = (image.get("source") or {}).get("bytes")
            yield Slot(data, _swap(blocks, i, lambda note: {"text": note}))
        result = block.get("toolResult")
        if isinstance(result, dict):
            yield from _bedrock_blocks(_list(result.get("content")))


def _ollama(conversation: list[Message]) -> Iterator[Slot]:
    for _, message in _dicts(conversation):
        for i, data in enumerate(_list(message.get("images"))):
            yield Slot(data if isinstance(data, str | bytes) else None, _in_ollama(message, i))


def _in_ollama(message: Message, index: int) -> Replace:
    def replace(note: str, edits: Edits) -> None:
        edits.remove(message["images"], index)
        content = message.get("content")
        message["content"] = f"{content}\n{note}" if isinstance(content, str) and content else note

    return replace


_FINDERS: Final = {
    "anthropic": _anthropic,
    "openai-responses": _openai_responses,
    "openai-chat": _openai_chat,
    "gemini": _gemini,
    "bedrock": _bedrock,
    "ollama": _ollama,
}
