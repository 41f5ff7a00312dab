"""One bounded HTTP exchange: a hard deadline for the whole of it and a cap on the answer.

The catalog update and the local-runtime probes ask servers the gate does not control: a
server that never answers, answers one byte at a time or sends far more than asked must
cost no more than `deadline` seconds and `max_bytes` bytes. httpx's timeouts bound each
read, not the whole exchange, so the exchange runs in a daemon thread that the caller stops
waiting for at the deadline.

What such a server sends is also parsed under a bound: `parse_json` refuses a document
nested deeper than `MAX_JSON_DEPTH` (a models.dev catalog nests 6 deep, a runtime's answer
fewer), so an answer nested 100,000 deep is one line, not a `RecursionError` traceback in
every decision.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Final

from visiongate.kernel._errors import VisiongateError

__all__ = ["MAX_JSON_DEPTH", "Answer", "FetchError", "JsonTooDeep", "bounded_request", "parse_json"]

MAX_JSON_DEPTH: Final = 64
"""How deep a JSON document from outside may nest (the YAML loader's bound too)."""


class FetchError(VisiongateError):
    """No usable answer; the message is one line naming the URL and why."""


class JsonTooDeep(ValueError):
    """A JSON document nested deeper than its bound (the message says how deep may nest)."""


def parse_json(data: str | bytes | bytearray, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads`, refusing a document nested deeper than `max_depth` with `JsonTooDeep`;
    `json.JSONDecodeError` and `UnicodeDecodeError` as `json.loads` raises them."""
    try:
        document = json.loads(data)
    except RecursionError:  # the C decoder stops at the interpreter's recursion limit
        raise JsonTooDeep(f"JSON nested deeper than {max_depth} levels") from None
    if _deeper_than(document, max_depth):
        raise JsonTooDeep(f"JSON nested deeper than {max_depth} levels")
    return document


def _deeper_than(document: Any, max_depth: int) -> bool:
    """Whether `document` nests more than `max_depth` arrays and objects, walked with an
    explicit stack (the walk itself must not recurse)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        if not isinstance(value, dict | list):
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


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
