"""One bounded HTTP exchange: a hard deadline for the whole of it and a cap on the answer.

The catalog update and the local-runtime probes ask servers the gate does not control: a
server that never answers, answers one byte at a time or sends far more than asked must
cost no more than `deadline` seconds and `max_bytes` bytes. httpx's timeouts bound each
read, not the whole exchange, so the exchange runs in a daemon thread that the caller stops
waiting for at the deadline.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from visiongate.kernel._errors import VisiongateError

__all__ = ["Answer", "FetchError", "bounded_request"]


class FetchError(VisiongateError):
    """No usable answer; the message is one line naming the URL and why."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes


def bounded_request(
    method: str,
    url: str,
    *,
    deadline: float,
    max_bytes: int,
    json_body: Any = None,
    follow_redirects: bool = False,
) -> Answer:
    """The answer to one request, within `deadline` seconds in all and `max_bytes` bytes."""
    outcome: dict[str, Any] = {}

    def exchange() -> None:
        try:
            outcome["answer"] = _exchange(
                method, url, deadline, max_bytes, json_body, follow_redirects
            )
        except FetchError as error:
            outcome["error"] = error

    worker = threading.Thread(target=exchange, name="visiongate-fetch", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        raise FetchError(f"{url} gave no complete answer within {deadline:g} s")
    if "error" in outcome:
        raise outcome["error"]
    answer: Answer = outcome["answer"]
    return answer


def _exchange(
    method: str, url: str, deadline: float, max_bytes: int, json_body: Any, follow: bool
) -> Answer:
    import httpx  # imported here: only a fetch needs it, never a decision

    timeout = httpx.Timeout(deadline, connect=min(deadline, 10.0))
    try:
        with httpx.stream(
            method, url, json=json_body, timeout=timeout, follow_redirects=follow
        ) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise FetchError(_too_large(url, max_bytes))
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    raise FetchError(_too_large(url, max_bytes))
            return Answer(response.status_code, bytes(body))
    except httpx.HTTPError as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise FetchError(f"{url} could not be reached: {reason[:200]}") from error


def _too_large(url: str, max_bytes: int) -> str:
    if max_bytes >= 1024 * 1024:
        return f"{url} sent more than {max_bytes // (1024 * 1024)} MiB"
    return f"{url} sent more than {max_bytes} bytes"
