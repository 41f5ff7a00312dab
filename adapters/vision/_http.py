"""A backend for any OpenAI-compatible chat-completions endpoint that accepts images.

OpenRouter, OpenAI, Gemini's compatibility API, Ollama, vLLM, llama.cpp server and LM
Studio all speak this protocol. Requests are synchronous (`httpx.Client`); async callers
go through `describe_or_unavailable_async`, which runs them in a worker thread.
"""

from __future__ import annotations

import base64
import io
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import httpx
from PIL import Image

from ._base import Description, VisionUnavailable, clip_text, one_line

MAX_RETRY_AFTER_S: Final = 30.0
"""Longest wait honoured from a `Retry-After` header or from backoff."""
MAX_CHARS: Final = 8_000
SENDABLE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/webp"})
DESCRIBE_PROMPT: Final = (
    "Describe this image for an assistant that cannot see it. Say first what kind of image "
    "it is (screenshot, photo, chart, diagram...). Transcribe the important visible text "
    "exactly, in reading order, and say roughly where things are. Describe only what is "
    "visible; do not guess. Be concise."
)
QUESTION_PROMPT: Final = (
    "{question}\n\nAnswer only from what is visible in the image, and say so if the image "
    "does not show it."
)


@dataclass(frozen=True)
class _Transient:
    """A failure worth retrying: what went wrong, what to fix, and the server's wait hint."""

    problem: str
    fix: str
    retry_after: float | None = None


class OpenAICompatibleBackend:
    """Describes images by asking a vision model behind `{base_url}/chat/completions`.

    Retries 429, 5xx, timeouts and connection errors up to `max_retries` times, waiting
    `backoff * 2**attempt` seconds (or the server's `Retry-After`), each capped at 30 s.
    `timeout` applies to each network step of each attempt, so the worst case is about
    `(max_retries + 1) * timeout` plus the waits. The API key is read from the environment
    variable `api_key_env` on every call, so a rotated key is picked up; with no
    `api_key_env` no `Authorization` header is sent (local servers need none).
    """

    def __init__(
        self,
        provider: str,
        model: str,
        base_url: str,
        api_key_env: str | None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        *,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.shown_url = display_url(self.url)
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff = max(0.0, backoff)
        self.extra_body = MappingProxyType(dict(extra_body or {}))
        self._client = httpx.Client(timeout=httpx.Timeout(timeout))

    @property
    def name(self) -> str:
        return f"openai-compatible:{self.provider}/{self.model}"

    @property
    def _endpoint(self) -> str:
        return f"the vision endpoint `{self.shown_url}`"

    def close(self) -> None:
        """Close pooled connections; the backend must not be used afterwards."""
        self._client.close()

    def __enter__(self) -> OpenAICompatibleBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        """The model's description of `image`, or its answer to `question` about it."""
        started = time.perf_counter()
        key = self._api_key()
        body = self._request_body(image, media_type, question)
        response = self._post_with_retries(body, key)
        text = clip_text(self._content_of(response, key), MAX_CHARS)
        elapsed_ms = (time.perf_counter() - started) * 1000
        return Description(text=text, backend=self.name, cached=False, elapsed_ms=elapsed_ms)

    def _api_key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise VisionUnavailable(
                f"environment variable `{self.api_key_env}` is not set; export the api key "
                f"for `{self.provider}` in it"
            )
        return key

    def _request_body(self, image: bytes, media_type: str, question: str | None) -> dict[str, Any]:
        prompt = QUESTION_PROMPT.format(question=question) if question else DESCRIBE_PROMPT
        image, media_type = sendable_image(image, media_type)
        data_url = f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"
        content = [
            {"type": "text", "text": prompt},
            {"type": "image_url", "image_url": {"url": data_url}},
        ]
        # `extra_body` comes first so it can add fields but never replace these two.
        return {
            **self.extra_body,
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
        }

    def _post_with_retries(self, body: dict[str, Any], key: str | None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        for attempt in range(self.max_retries):
            outcome = self._attempt(body, headers, key)
            if isinstance(outcome, httpx.Response):
                return outcome
            time.sleep(self._delay(attempt, outcome.retry_after))
        outcome = self._attempt(body, headers, key)
        if isinstance(outcome, httpx.Response):
            return outcome
        attempts = self.max_retries + 1
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        raise VisionUnavailable(f"{outcome.problem} ({tries}); {outcome.fix}")

    def _attempt(
        self, body: dict[str, Any], headers: dict[str, str], key: str | None
    ) -> httpx.Response | _Transient:
        try:
            response = self._client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            return _Transient(
                f"{self._endpoint} did not answer within {self.timeout:g}s",
                "raise `auxiliary.vision.timeout` or check the server",
            )
        except httpx.TransportError as exc:
            return _Transient(
                f"could not reach {self._endpoint} ({one_line(str(exc), 120)})",
                "check `auxiliary.vision.base_url` and that the server is running",
            )
        except (httpx.RequestError, httpx.InvalidURL) as exc:
            # Not worth retrying: a bad url, a garbled response, a redirect loop.
            raise VisionUnavailable(
                f"the request to {self._endpoint} failed ({one_line(str(exc), 120)}); "
                "check `auxiliary.vision.base_url`"
            ) from exc
        if response.status_code == 429 or response.status_code >= 500:
            return self._transient_status(response, key)
        if response.status_code >= 300:
            raise VisionUnavailable(self._refusal(response, key))
        return response

    def _transient_status(self, response: httpx.Response, key: str | None) -> _Transient:
        status = response.status_code
        if status == 429:
            return _Transient(
                f"{self._endpoint} is rate limiting (http 429)",
                "wait and try again, or use a model or key with a higher rate limit",
                _retry_after(response),
            )
        return _Transient(
            f"{self._endpoint} failed with http {status}{_snippet(response, key)}",
            "check the server's logs or try again later",
            _retry_after(response),
        )

    def _refusal(self, response: httpx.Response, key: str | None) -> str:
        status = response.status_code
        detail = _snippet(response, key)
        if status in (401, 403) and self.api_key_env:
            return (
                f"{self._endpoint} rejected the api key (http {status}{detail}); "
                f"check the key in `${self.api_key_env}`"
            )
        if status in (401, 403):
            return (
                f"{self._endpoint} wants an api key (http {status}{detail}); "
                "name the variable that holds it in `auxiliary.vision.api_key_env`"
            )
        if status == 404:
            return (
                f"{self._endpoint} answered http 404 for model `{self.model}`"
                f"{detail}; check `auxiliary.vision.base_url` (it usually ends in `/v1`) "
                "and `auxiliary.vision.model`"
            )
        if 300 <= status < 400:
            return (
                f"{self._endpoint} redirected the request (http {status}); "
                "set `auxiliary.vision.base_url` to the final address"
            )
        if status == 413:
            return f"{self._endpoint} says the image is too large (http 413)"
        return (
            f"{self._endpoint} refused the request (http {status}{detail}); "
            f"check that model `{self.model}` accepts images"
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        wait = retry_after if retry_after is not None else self.backoff * 2**attempt
        return min(MAX_RETRY_AFTER_S, max(0.0, wait))

    def _content_of(self, response: httpx.Response, key: str | None) -> str:
        hint = (
            f"{self._endpoint} did not answer in the chat-completions format; "
            "check that `auxiliary.vision.base_url` points at an openai-compatible api"
        )
        try:
            payload = response.json()
        except ValueError as exc:
            raise VisionUnavailable(hint) from exc
        if isinstance(payload, dict) and payload.get("error"):
            # OpenRouter reports some upstream failures as http 200 with an `error` object.
            message = _redacted(_error_message(payload), key)
            raise VisionUnavailable(f"{self._endpoint} reported: {message}")
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise VisionUnavailable(hint) from exc
        text = _text_of(content).strip()
        if not text:
            raise VisionUnavailable(
                f"the vision model `{self.model}` returned an empty description; "
                "check that it accepts images"
            )
        return text


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


def _text_of(content: Any) -> str:
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


def _retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds; HTTP dates and junk fall back to backoff."""
    value = response.headers.get("retry-after", "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _snippet(response: httpx.Response, key: str | None) -> str:
    """`: <server message>` from an error body, redacted and short, or nothing."""
    try:
        payload = response.json()
    except ValueError:
        payload = response.text
    message = _redacted(_error_message(payload), key)
    return f": {message}" if message else ""


def _redacted(message: str, key: str | None) -> str:
    """One short line of a server's message, without the api key or any image data."""
    if key:
        message = message.replace(key, "(key)")
    return one_line(message, 160)


def _error_message(payload: Any) -> str:
    if isinstance(payload, dict):
        error = payload.get("error", payload.get("message", payload.get("detail", "")))
        if isinstance(error, dict):
            return str(error.get("message", ""))
        return str(error)
    return str(payload)
