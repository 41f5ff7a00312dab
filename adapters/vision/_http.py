"""A backend for any OpenAI-compatible chat-completions endpoint that accepts images.

OpenRouter, OpenAI, Gemini's compatibility API, Ollama, vLLM, llama.cpp server and LM
Studio all speak this protocol. `describe` is synchronous; async callers go through
`describe_or_unavailable_async`, which runs it in a worker thread.

Every call is bounded whatever the server does: `timeout` bounds each network step,
`deadline` the whole call (connecting, slow headers, a trickled body, retries and the waits
between them), and `max_response_bytes` the body read (error bodies are read up to 64 KiB
and only summarized). The exchange runs on a private event loop for the call, so the
deadline can cancel a read in progress, which a blocking socket read cannot do.

Images are fitted to what the backend reads before they are sent, by the same image stage as
the native lane, with the backend's own budget and ceiling (`auxiliary.vision.max_image_bytes`,
counted as base64 text, and `max_edge_px`): a 5K screenshot is not shipped whole to a model
that downsizes it anyway, or to a server that refuses it. A backend that still rejects the size
(http 413, or a 400 that says the image is too large) gets one more try, with the image halved
on each side and a quarter of the bytes, within the same deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import httpx

from visiongate.engine.facts.auxiliary import (
    DEFAULT_MAX_EDGE_PX,
    DEFAULT_MAX_IMAGE_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    default_deadline,
)

from ..images import ImageTarget, ProcessedImage, process_image
from ._base import Description, VisionUnavailable, clip_text, one_line
from ._http_wire import Answer, display_url, read_capped, retry_after, text_of
from ._redact import error_message, redact_key, short_reason, summarize_error

SENT_FORMATS: Final = ("image/png", "image/jpeg", "image/webp")
"""The formats every supported server takes in a data URL (Ollama's layer only these)."""
_MIN_RETRY_EDGE_PX: Final = 256
_MIN_RETRY_BASE64: Final = 16 * 1024
_SIZE_WORDS: Final = re.compile(
    r"too (large|big)|exceed|(image|file|payload|request|body) size|dimension|resolution|pixels",
    re.IGNORECASE,
)
MAX_RETRY_AFTER_S: Final = 30.0
"""Longest wait honoured from a `Retry-After` header or from backoff."""
MAX_CHARS: Final = 8_000
ERROR_BODY_BYTES: Final = 64 * 1024
"""Error bodies are only summarized: no more of them is read."""
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


class _TooLarge(VisionUnavailable):
    """The backend rejected the size of the image: worth one more try with a smaller one."""


@dataclass(frozen=True)
class _Transient:
    """A failure worth retrying: what went wrong, what to fix, and the server's wait hint."""

    problem: str
    fix: str
    retry_after: float | None = None


class OpenAICompatibleBackend:
    """Describes images by asking a vision model behind `{base_url}/chat/completions`.

    Retries 429, 5xx, timeouts and connection errors up to `max_retries` times, waiting
    `backoff * 2**attempt` seconds (or the server's `Retry-After`), each capped at 30 s and
    never past the deadline. `timeout` applies to each network step of each attempt;
    `deadline` (default twice `timeout`) to the whole call. The API key is read from the
    environment variable `api_key_env` on every call, so a rotated key is picked up; with no
    `api_key_env` no `Authorization` header is sent (local servers need none). Nothing the
    server echoes of the key reaches a description or a reason (`_redact`).
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
        deadline: float | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        max_edge_px: int = DEFAULT_MAX_EDGE_PX,
    ) -> None:
        self.provider = provider
        self.model = model
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.shown_url = display_url(self.url)
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.deadline = deadline if deadline is not None else default_deadline(timeout)
        self.max_response_bytes = max_response_bytes
        self.image_target = ImageTarget(SENT_FORMATS, max_image_bytes, max_edge_px)
        self.max_retries = max(0, max_retries)
        self.backoff = max(0.0, backoff)
        self.extra_body = MappingProxyType(dict(extra_body or {}))
        # httpx loads with the first backend, not with the router: about 0.1 s of CPU (its
        # command line, `rich`) that a proxy or `route` with no vision endpoint never spends.
        import httpx

        # Built once: loading the CA bundle is the costly part of a client.
        self._ssl = httpx.create_ssl_context()

    @property
    def name(self) -> str:
        return f"openai-compatible:{self.provider}/{self.model}"

    @property
    def _endpoint(self) -> str:
        return f"the vision endpoint `{self.shown_url}`"

    def close(self) -> None:
        """Release resources; each call opens and closes its own connections, so nothing is
        held between calls and this only exists for callers that use the backend in `with`."""

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
        prompt = QUESTION_PROMPT.format(question=question) if question else DESCRIBE_PROMPT
        answer = asyncio.run(self._post_with_deadline(image, prompt, key))
        text = clip_text(redact_key(self._content_of(answer, key), key), MAX_CHARS)
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

    def _fitted(self, image: bytes, target: ImageTarget) -> ProcessedImage:
        """`image` fitted to `target` by the image stage; raises when it cannot be sent."""
        fitted = process_image(image, target)
        if not isinstance(fitted, ProcessedImage):
            raise VisionUnavailable(
                f"the image could not be prepared for {self._endpoint}: {fitted.reason}"
            )
        return fitted

    def _request_body(self, image: ProcessedImage, prompt: str) -> dict[str, Any]:
        data_url = f"data:{image.media_type};base64,{image.base64}"
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

    async def _post_with_deadline(self, image: bytes, prompt: str, key: str | None) -> Answer:
        attempts: list[int] = []
        try:
            async with asyncio.timeout(self.deadline):
                return await self._post_fitted(image, prompt, key, attempts)
        except TimeoutError:
            raise VisionUnavailable(
                f"{self._endpoint} did not finish within the {self.deadline:g}s deadline "
                f"({_tries(len(attempts))}); raise `auxiliary.vision.deadline` or check the server"
            ) from None

    async def _post_fitted(
        self, image: bytes, prompt: str, key: str | None, attempts: list[int]
    ) -> Answer:
        """Send the image fitted to the backend's limits; once smaller if it rejects the size."""
        fitted = await asyncio.to_thread(self._fitted, image, self.image_target)
        try:
            return await self._post_with_retries(self._request_body(fitted, prompt), key, attempts)
        except _TooLarge as refused:
            smaller = _smaller_target(fitted)
            retry = await asyncio.to_thread(self._fitted, image, smaller)
            try:
                body = self._request_body(retry, prompt)
                return await self._post_with_retries(body, key, attempts)
            except _TooLarge as again:
                raise VisionUnavailable(
                    f"{again.reason}, at {fitted.width}x{fitted.height} and again at "
                    f"{retry.width}x{retry.height}; lower `auxiliary.vision.max_edge_px` or "
                    "`max_image_bytes`"
                ) from refused

    async def _post_with_retries(
        self, body: dict[str, Any], key: str | None, attempts: list[int]
    ) -> Answer:
        headers = {"Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        import httpx  # loaded by __init__

        ends = time.monotonic() + self.deadline
        timeout = httpx.Timeout(self.timeout)
        async with httpx.AsyncClient(timeout=timeout, verify=self._ssl) as client:
            while True:
                attempts.append(1)
                outcome = await self._attempt(client, body, headers, key)
                if isinstance(outcome, Answer):
                    return outcome
                tries = _tries(len(attempts))
                if len(attempts) > self.max_retries:
                    raise VisionUnavailable(f"{outcome.problem} ({tries}); {outcome.fix}")
                wait = self._delay(len(attempts) - 1, outcome.retry_after)
                if time.monotonic() + wait >= ends:
                    raise VisionUnavailable(
                        f"{outcome.problem} ({tries}; waiting {wait:g}s more would pass the "
                        f"{self.deadline:g}s deadline); {outcome.fix}"
                    )
                await asyncio.sleep(wait)

    async def _attempt(
        self,
        client: httpx.AsyncClient,
        body: dict[str, Any],
        headers: dict[str, str],
        key: str | None,
    ) -> Answer | _Transient:
        import httpx  # loaded by __init__

        try:
            answer = await self._exchange(client, body, headers)
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
        if answer.status == 429 or answer.status >= 500:
            return self._transient_status(answer, key)
        if answer.status >= 300:
            refusal = self._refusal(answer, key)
            if answer.status == 413 or (answer.status == 400 and _SIZE_WORDS.search(refusal)):
                raise _TooLarge(refusal)
            raise VisionUnavailable(refusal)
        self._check_body(answer)
        return answer

    async def _exchange(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
    ) -> Answer:
        async with client.stream("POST", self.url, json=body, headers=headers) as response:
            limit = self.max_response_bytes if response.status_code < 300 else ERROR_BODY_BYTES
            data, cut = await read_capped(response, limit)
            return Answer(response.status_code, response.headers, data, cut)

    def _check_body(self, answer: Answer) -> None:
        encoding = answer.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            # Decoding would let a small compressed body expand past every limit.
            raise VisionUnavailable(
                f"{self._endpoint} sent a compressed answer (`{one_line(encoding, 20)}`) "
                "though asked not to; check the server or the proxy in front of it"
            )
        if answer.cut:
            raise VisionUnavailable(
                f"{self._endpoint} sent an answer over {self.max_response_bytes} bytes and "
                "was cut off; raise `auxiliary.vision.max_response_bytes` if the model's "
                "descriptions are that long"
            )

    def _transient_status(self, answer: Answer, key: str | None) -> _Transient:
        if answer.status == 429:
            return _Transient(
                f"{self._endpoint} is rate limiting (http 429)",
                "wait and try again, or use a model or key with a higher rate limit",
                retry_after(answer.headers),
            )
        return _Transient(
            f"{self._endpoint} failed with {summarize_error(answer.status, answer.body, key)}",
            "check the server's logs or try again later",
            retry_after(answer.headers),
        )

    def _refusal(self, answer: Answer, key: str | None) -> str:
        status = answer.status
        summary = summarize_error(status, answer.body, key)
        if status in (401, 403) and self.api_key_env:
            return (
                f"{self._endpoint} rejected the api key ({summary}); "
                f"check the key in `${self.api_key_env}`"
            )
        if status in (401, 403):
            return (
                f"{self._endpoint} wants an api key ({summary}); "
                "name the variable that holds it in `auxiliary.vision.api_key_env`"
            )
        if status == 404:
            return (
                f"{self._endpoint} answered {summary} for model `{self.model}`; check "
                "`auxiliary.vision.base_url` (it usually ends in `/v1`) and "
                "`auxiliary.vision.model`"
            )
        if 300 <= status < 400:
            return (
                f"{self._endpoint} redirected the request (http {status}); "
                "set `auxiliary.vision.base_url` to the final address"
            )
        if status == 413:
            return f"{self._endpoint} says the image is too large (http 413)"
        return (
            f"{self._endpoint} refused the request ({summary}); "
            f"check that model `{self.model}` accepts images"
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        wait = retry_after if retry_after is not None else self.backoff * 2**attempt
        return min(MAX_RETRY_AFTER_S, max(0.0, wait))

    def _content_of(self, answer: Answer, key: str | None) -> str:
        hint = (
            f"{self._endpoint} did not answer in the chat-completions format; "
            "check that `auxiliary.vision.base_url` points at an openai-compatible api"
        )
        try:
            payload = json.loads(answer.body)
        except (ValueError, RecursionError) as exc:  # not JSON, or nested past the stack
            raise VisionUnavailable(hint) from exc
        if isinstance(payload, dict) and payload.get("error"):
            # OpenRouter reports some upstream failures as http 200 with an `error` object.
            reason = short_reason(error_message(payload), key)
            raise VisionUnavailable(f"{self._endpoint} reported: {reason}")
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise VisionUnavailable(hint) from exc
        text = text_of(content).strip()
        if not text:
            raise VisionUnavailable(
                f"the vision model `{self.model}` returned an empty description; "
                "check that it accepts images"
            )
        return text


def _tries(count: int) -> str:
    return f"{count} attempt{'s' if count != 1 else ''}"


def _smaller_target(sent: ProcessedImage) -> ImageTarget:
    """Half the long edge and a quarter of the bytes of what was sent (with floors)."""
    edge = max(_MIN_RETRY_EDGE_PX, max(sent.width, sent.height) // 2)
    budget = max(_MIN_RETRY_BASE64, len(sent.base64) // 4)
    return ImageTarget(SENT_FORMATS, budget, edge)
