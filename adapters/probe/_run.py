"""Run one probe: send the request, read the answer, give a verdict.

| what came back                                                | verdict        |
|---------------------------------------------------------------|----------------|
| a reply that contains the code                                | `accepts`      |
| an HTTP 4xx whose error names the image, vision or media part | `refuses`      |
| anything else (another error, a reply without the code)       | `inconclusive` |

A route that silently drops the image is `inconclusive`, not `refuses`: the model answers,
it just cannot read the code. The key is sent in a header only; neither it nor the URL's
user info appears in what the probe reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import httpx

from visiongate.engine import NativeSettings
from visiongate.engine.facts import ProviderRoute

from .._routed import RoutedResult
from ..images import ImageTarget, ProcessedImage, process_image
from ..payloads._render import render_payload
from ..vision._base import one_line
from ._image import code_image, normalized, random_code
from ._shapes import CALL_ID, TOOL, shape_for

__all__ = ["ProbeResult", "ProbeTarget", "probe_route", "safe_origin"]

Verdict = Literal["accepts", "refuses", "inconclusive"]

_REFUSAL: Final = re.compile(
    r"image|multimodal|vision|media|image_url|input_image|inline_?data|text is not set"
    r"|content type|only (?:text|string)",
    re.IGNORECASE,
)
_REFUSING_STATUSES: Final = frozenset({400, 413, 415, 422})


@dataclass(frozen=True)
class ProbeTarget:
    """Where and how to probe: the route (for its payload shape and limits) and the endpoint."""

    route: ProviderRoute
    model: str
    api: str
    base_url: str
    key: str | None = None
    """Sent in the API's key header; never printed, logged or recorded."""
    timeout: float = 60.0


@dataclass(frozen=True)
class ProbeResult:
    verdict: Verdict
    code: str
    api: str
    origin: str
    """`scheme://host[:port]` of the endpoint, without user info or path."""
    detail: str
    """One line: what the model replied, or the error, with image data and keys removed."""
    status: int | None = None
    reply: str = ""
    image_size: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "code": self.code,
            "api": self.api,
            "origin": self.origin,
            "detail": self.detail,
            "status": self.status,
            "reply": self.reply,
            "image_size": list(self.image_size),
        }


def safe_origin(url: str) -> str:
    """`scheme://host[:port]` of `url`: no user info, path or query (they may hold secrets)."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host


def probe_route(target: ProbeTarget, code: str | None = None) -> ProbeResult:
    """Send the probe to `target` and read the verdict (`code` is random unless given)."""
    code = code or random_code()
    shape = shape_for(target.api)
    image = _fitted(code_image(code), target)
    body = shape.body(target.model, _tool_result(image, target))
    url = target.base_url.rstrip("/") + shape.path(target.model)
    headers = {"content-type": "application/json"}
    if target.key:
        headers.update(shape.key_headers(target.key))
    if target.api == "anthropic":
        headers["anthropic-version"] = "2023-06-01"
    base = ProbeResult("inconclusive", code, target.api, safe_origin(target.base_url), "")
    base = replace(base, image_size=(image.width, image.height))
    try:
        response = httpx.post(url, headers=headers, json=body, timeout=target.timeout)
    except httpx.HTTPError as error:
        reason = one_line(f"{type(error).__name__}: {error}".replace(url, base.origin))
        return replace(base, detail=f"no answer from {base.origin}: {reason}")
    return _verdict(base, response, shape.reply)


def _fitted(png: bytes, target: ProbeTarget) -> ProcessedImage:
    """The code image through the image stage, fitted to the route like any tool image."""
    route = target.route
    goal = ImageTarget.create(
        route.formats, NativeSettings(), route.max_image_base64, route.max_edge_px
    )
    processed = process_image(png, goal)
    if not isinstance(processed, ProcessedImage):
        raise ValueError(f"the probe image was refused by the image stage: {processed.reason}")
    return processed


def _tool_result(image: ProcessedImage, target: ProbeTarget) -> list[dict[str, Any]]:
    """The tool result the router would send on this route, in this API shape."""
    route = replace(target.route, accepts_tool_images=True, evidence="probed")
    result = RoutedResult(
        source="mcp",
        lane="native",
        text=f"{TOOL}: the screen shows one image",
        route=route,
        images=(image,),
        tool_name=TOOL,
        api=target.api,
    )
    return list(render_payload(result, target.api, tool_call_id=CALL_ID).messages)


def _verdict(
    base: ProbeResult, response: httpx.Response, reply_of: Callable[[Any], str]
) -> ProbeResult:
    status = response.status_code
    text = response.text
    if status >= 400:
        error = one_line(_error_text(text), 300)
        refused = status in _REFUSING_STATUSES and _REFUSAL.search(error) is not None
        verdict: Verdict = "refuses" if refused else "inconclusive"
        return replace(base, verdict=verdict, status=status, detail=f"HTTP {status}: {error}")
    try:
        reply = str(reply_of(response.json()))
    except (ValueError, AttributeError, TypeError):
        reply = ""
    shown = one_line(reply or text, 200)
    if reply and normalized(base.code) in normalized(reply):
        detail = f"the model read the code back through {base.api} at {base.origin}"
        return replace(base, verdict="accepts", status=status, reply=reply, detail=detail)
    return replace(
        base,
        status=status,
        reply=reply,
        detail=f"HTTP {status}, but the reply does not hold the code: {shown}",
    )


def _error_text(text: str) -> str:
    """The error message of a JSON error body (`error.message`), else the body."""
    try:
        body = json.loads(text)
    except ValueError:
        return text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return text
