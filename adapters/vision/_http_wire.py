"""What travels to and from a vision endpoint: the body read within a cap, the answer's
text, the url as the model may see it, the server's wait hint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:  # annotations only: httpx loads with the first vision backend (`_http`)
    import httpx

__all__ = [
    "Answer",
    "display_url",
    "read_capped",
    "retry_after",
    "text_of",
]


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
