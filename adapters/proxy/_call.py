"""A tool call in flight (`Call`), whom the proxy routes for (`ProxyTarget`), and the small
readings of a routed answer its router (`_calls`) and its records need."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the router and the image stage load after the handshake (see `_serve`)
    from .._routed import RoutedResult
    from ._fit import Fitted

__all__ = ["MANY_IMAGE_EDGE_PX", "Ask", "Call", "ProxyTarget"]

MANY_IMAGE_EDGE_PX: Final = 2000
"""Anthropic's API rejects images over 2000 px once a request holds more than 20 images; a
client's conversation keeps every image, so the proxy keeps each one at or under it."""
Ask = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any] | None]]


@dataclass(frozen=True)
class ProxyTarget:
    """Whom the proxy routes for, and the client's limits."""

    provider: str
    model: str
    max_result_bytes: int
    max_edge_px: int = MANY_IMAGE_EDGE_PX


@dataclass
class Call:
    """One `tools/call` in flight (or a `tasks/result` standing for one)."""

    request_id: Any
    tool: str | None
    started: float = field(default_factory=time.perf_counter)
    answered: float | None = None
    """When the server's answer arrived."""


def undelivered(execution: Any, fitted: Fitted, target: Any) -> Any:
    """The record's `execution` as the client really received it: when the answer became an
    error, every attached image moves from `attached` to `refused` with the reason, so the
    record never claims pixels that were not sent."""
    if not isinstance(execution, Mapping) or "refused" not in fitted.changes:
        return execution
    count = len(execution.get("attached") or [])
    if not count:
        return execution
    reason = (
        f"not sent: the whole answer was over the client's limit of "
        f"{target.max_result_bytes:,} bytes per message"
    )
    from .._routed import refuse_attached  # loaded with the router by then

    return refuse_attached(execution, dict.fromkeys(range(count), reason))


def sent_image_chars(routed: RoutedResult) -> int:
    """Base64 characters of every image copy the routed answer carries."""
    from ..wire._inline import inline_image_chars  # loaded with the router by then

    return inline_image_chars(routed.to_mcp())[1]


def schema_problem(schema: Any, value: Any) -> str | None:
    """`wire._schemas.schema_problem`, imported at the first check: jsonschema loads with the
    router, after the handshake, not at the proxy's start."""
    from ..wire._schemas import schema_problem as check

    return check(schema, value)


def out_of_time(problem: str | None) -> bool:
    """`wire._schemas.out_of_time`, imported as `schema_problem` is."""
    from ..wire._schemas import out_of_time as timed_out

    return timed_out(problem)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
