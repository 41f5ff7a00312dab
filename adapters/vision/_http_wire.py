"""What travels to and from a vision endpoint: the image made sendable, the body read within
a cap, the answer's text, the url as the model may see it, the server's wait hint."""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx
from PIL import Image

from ._base import VisionUnavailable, one_line

__all__ = [
    "SENDABLE_TYPES",
    "Answer",
    "display_url",
    "read_capped",
    "retry_after",
    "sendable_image",
    "text_of",
]

SENDABLE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp"})


@dataclass(frozen=True)
class Answer:
    """A response read within the limits: status, headers and (at most the cap of) its body."""

    status: int
    headers: httpx.Headers
    body: bytes
    cut: bool
    """True when the body went past the cap and the rest was not read."""


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the raw body; True when there was more (left unread)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        if size + len(chunk) > limit:
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def sendable_image(image: bytes, media_type: str) -> tuple[bytes, str]:
    """`image` as PNG, JPEG or WebP, the formats every supported server takes in a data URL.

    Ollama's compatibility layer accepts only these three; GIF, BMP, TIFF and the rest are
    converted to PNG (first frame) rather than refused by the server.
    """
    media_type = media_type.partition(";")[0].strip().lower()
    media_type = "image/jpeg" if media_type == "image/jpg" else media_type
    if media_type in SENDABLE_TYPES:
        return image, media_type
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(image)) as opened:
                converted = opened.convert("RGBA")
    except (
        OSError,
        ValueError,
        Image.DecompressionBombWarning,
        Image.DecompressionBombError,
    ) as exc:
        raise VisionUnavailable(
            f"the `{one_line(media_type, 40)}` image could not be converted to png for the "
            "vision endpoint"
        ) from exc
    buffer = io.BytesIO()
    converted.save(buffer, "PNG")
    return buffer.getvalue(), "image/png"


def display_url(url: str) -> str:
    """`url` without credentials, query or fragment, fit for a reason the model reads."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparseable url)"
    if ":" in host:
        host = f"[{host}]"
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def text_of(content: Any) -> str:
    """Message content as text; some servers send a list of typed parts instead of a string."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def retry_after(headers: httpx.Headers) -> float | None:
    """`Retry-After` in seconds; HTTP dates and junk fall back to backoff."""
    value = headers.get("retry-after", "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        return None
