"""Images inside JSON values and text: what a result carries as base64 outside image blocks.

A tool may put an image anywhere: structured content (`{"content": [{"type": "image", "data":
..., "mimeType": ...}]}`, the shape `server-filesystem` mirrors), `_meta`, a serialized JSON
text block, a data URL in prose. Each such payload is an image of the result like an image
block: found here, decoded, then attached, referenced or refused by the lane, so no lane hands
the model base64 image data as text.

What counts as a payload, at any depth:

- an object with a base64 `data` or `blob` string and an image media type (`mimeType`,
  `mime_type`, `mediaType`, `media_type` or `contentType`), or bytes that sniff as an image;
- a string that is a base64 data URL of an image (`data:image/png;base64,...`);
- a string of at least `_BARE_MIN_CHARS` characters that is base64 and decodes to bytes that
  sniff as an image (an image with its media type left out).

`replace_inline` copies a value with every payload replaced by what a callback returns; the
input is never changed.
"""

from __future__ import annotations

import binascii
import re
from base64 import b64decode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "MEDIA_TYPE_KEYS",
    "PAYLOAD_KEYS",
    "InlineImage",
    "as_reference",
    "bare_image",
    "data_url_spans",
    "find_inline",
    "inline_image_chars",
    "replace_inline",
    "sniffed",
]

PAYLOAD_KEYS: Final = ("data", "blob")
MEDIA_TYPE_KEYS: Final = ("mimeType", "mime_type", "mediaType", "media_type", "contentType")
_BARE_MIN_CHARS: Final = 64
_SNIFF_CHARS: Final = 64
"""Base64 characters decoded to sniff a bare string (48 bytes: every magic number fits)."""
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_DATA_URL: Final = re.compile(
    r"data:(image/[A-Za-z0-9.+-]{1,60})(?:;[A-Za-z0-9=._-]{1,60})*;base64,([A-Za-z0-9+/]+={0,2})"
)
_WHITESPACE: Final = re.compile(r"[ \t\r\n]+")

Path = tuple[str | int, ...]
Kind = Literal["object", "data_url", "bare"]


@dataclass(frozen=True)
class InlineImage:
    """One image payload found inside a JSON value."""

    path: Path
    """Where it is: keys and list positions from the value's root."""
    kind: Kind
    data: bytes
    """The decoded bytes."""
    declared: str
    """The media type the value declared (`""` when it named none)."""
    payload_key: str | None = None
    """For an object: which key held the base64 (`data` or `blob`)."""
    media_type_key: str | None = None
    """For an object: which key held the media type, if any."""


def find_inline(value: Any) -> list[InlineImage]:
    """Every image payload in `value` (JSON-like data), in document order."""
    found: list[InlineImage] = []
    _walk(value, (), found)
    return found


def replace_inline(
    value: Any, found: Sequence[InlineImage], replacement: Callable[[InlineImage], Any]
) -> Any:
    """A copy of `value` with each payload in `found` replaced by `replacement(payload)`: for an
    object, a mapping of the keys to set (its other keys are kept); for a string, the new
    value. `value` itself when `found` is empty."""
    result = value
    for payload in found:
        result = _set(result, payload.path, payload, replacement(payload))
    return result


def bare_image(text: str) -> InlineImage | None:
    """`text` as one image when it is nothing but an image's base64 (line breaks allowed, as
    MIME writes it); its start is sniffed before anything else is decoded."""
    stripped = text.strip()
    head = "".join(stripped[: _SNIFF_CHARS * 2].split())[:_SNIFF_CHARS]
    if len(stripped) < _BARE_MIN_CHARS or not _sniffs_image(head):
        return None
    compact = "".join(stripped.split())
    if _BASE64.fullmatch(compact) is None:
        return None
    data = _decoded(compact)
    return InlineImage((), "bare", data, "") if data is not None else None


def as_reference(payload: InlineImage, reference: str) -> Any:
    """What stands for `payload` when its image is not sent as pixels: `reference` (the image's
    `MEDIA:` line, or why it was refused) in place of the base64, the object's other keys kept."""
    if payload.kind != "object":
        return reference
    assert payload.payload_key is not None
    return {payload.payload_key: reference}


def inline_image_chars(value: Any) -> tuple[int, int]:
    """How many payloads `value` seems to hold and their base64 characters, without decoding
    (a cheap estimate for sharing a message's room out)."""
    count = chars = 0
    for item in _candidates(value):
        count, chars = count + 1, chars + len(item)
    return count, chars


def data_url_spans(text: str) -> list[tuple[int, int, bytes, str]]:
    """Base64 image data URLs in prose: `(start, end, decoded bytes, declared type)` each;
    a data URL whose base64 is broken is left alone (it carries no image)."""
    spans = []
    for match in _DATA_URL.finditer(text):
        data = _decoded(match.group(2))
        if data is not None:
            spans.append((match.start(), match.end(), data, match.group(1).lower()))
    return spans


# -- finding -------------------------------------------------------------------------------------


def _walk(value: Any, path: Path, found: list[InlineImage]) -> None:
    if isinstance(value, Mapping):
        image = _object_image(value, path)
        if image is not None:
            found.append(image)
            return
        for key, item in value.items():
            _walk(item, (*path, key), found)
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            _walk(item, (*path, position), found)
    elif isinstance(value, str):
        image = _string_image(value, path)
        if image is not None:
            found.append(image)


def _object_image(value: Mapping[str, Any], path: Path) -> InlineImage | None:
    key = _payload_key(value)
    if key is None:
        return None
    data = _decoded(value[key])
    if data is None:
        return None
    media_type_key, declared = _declared(value)
    shown = sniffed(data)
    if not (declared.lower().startswith("image/") or shown.startswith("image/")):
        return None
    return InlineImage(path, "object", data, declared, key, media_type_key)


def _payload_key(value: Mapping[str, Any]) -> str | None:
    return next((key for key in PAYLOAD_KEYS if isinstance(value.get(key), str)), None)


def _declared(value: Mapping[str, Any]) -> tuple[str | None, str]:
    for key in MEDIA_TYPE_KEYS:
        if isinstance(value.get(key), str):
            return key, value[key]
    return None, ""


def _string_image(value: str, path: Path) -> InlineImage | None:
    if value.startswith("data:"):
        match = _DATA_URL.fullmatch(value.strip())
        data = _decoded(match.group(2)) if match else None
        if match is None or data is None:
            return None
        return InlineImage(path, "data_url", data, match.group(1).lower())
    if not _bare_image_head(value):
        return None
    data = _decoded(value)
    return InlineImage(path, "bare", data, "") if data is not None else None


def _bare_image_head(value: str) -> bool:
    """True for a long string whose start is base64 of an image's magic number (and that is
    base64 throughout): a cheap test, before anything is decoded."""
    if len(value) < _BARE_MIN_CHARS or not _sniffs_image(value[:_SNIFF_CHARS]):
        return False
    return _BASE64.fullmatch(value) is not None


def _sniffs_image(head: str) -> bool:
    data = _decoded(head)
    return data is not None and sniffed(data).startswith("image/")


def sniffed(data: bytes) -> str:
    """The media type the bytes show, or "" (`images.sniff_media_type`)."""
    # Imported here: the image stage loads when a message holds something like an image, not
    # when the proxy starts (issue 37).
    from ..images import sniff_media_type

    return sniff_media_type(data) or ""


def _decoded(text: str) -> bytes | None:
    """The bytes of strict base64 (line breaks allowed, as MIME writes it), else None."""
    compact = _WHITESPACE.sub("", text) if "\n" in text or " " in text else text
    if not compact:
        return None
    try:
        return b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None


def _candidates(value: Any) -> list[str]:
    """The base64 strings in `value` that look like image payloads (by their declared type or
    their form), walked iteratively: a deep value must not exhaust the stack."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.startswith("data:image/") or _bare_image_head(item):
                out.append(item)
        elif isinstance(item, Mapping):
            key = _payload_key(item)
            if key is not None and _declared(item)[1].lower().startswith("image/"):
                out.append(item[key])
                stack.extend(v for k, v in item.items() if k != key)
            else:
                stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return out


# -- replacing -----------------------------------------------------------------------------------


def _set(value: Any, path: Path, payload: InlineImage, new: Any) -> Any:
    if not path:
        if payload.kind == "object" and isinstance(value, Mapping) and isinstance(new, Mapping):
            return {**value, **new}
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping):
        return {**value, head: _set(value[head], rest, payload, new)}
    items = list(value)
    assert isinstance(head, int)
    items[head] = _set(items[head], rest, payload, new)
    return items
