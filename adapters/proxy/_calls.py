"""Tool results through the gate: route, fit to the client's limit, write one record per call.

A `tools/call` answer (or the `tasks/result` of a task that ran a tool) is routed by the
`Router` for the configured provider and model, exactly as an embedded agent's would be: the
native lane attaches fitted images (sharing what the text leaves of the client's limit, each at
or under the provider's many-image pixel limit), the text lane gives `MEDIA:` paths or
descriptions. The client gets `RoutedResult.to_mcp()`: valid MCP content, whatever the server
sent. Structured content is kept only for tools that declare an output schema (clients check
it there); elsewhere it is a JSON line of the text, because some clients show only the
structured content when it is present and drop the images.

Every call ends in one decision record, the library's schema plus a `proxy` object (server,
transport, latency, bytes, what fitting changed, and what was cleaned elsewhere since the last
record): a routed result, an error result, a JSON-RPC error, a timeout, a cancellation, a
malformed answer or a server that went away.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._cache import ImageCache
from ..mcp._wire import InvalidToolResult
from ..sanitize._line import untrusted_line
from ..sanitize._sanitizer import Sanitizer
from ._fit import Fitted, fit_call_response, image_budget
from ._jsonrpc import INTERNAL_ERROR, encode, error_response
from ._surfaces import clean_error

if TYPE_CHECKING:  # the router and the image stage load after the handshake (see `_serve`)
    from .._router import Router

__all__ = ["Call", "CallRouter", "ProxyTarget"]

MANY_IMAGE_EDGE_PX: Final = 2000
"""Anthropic's API rejects images over 2000 px once a request holds more than 20 images; a
client's conversation keeps every image, so the proxy keeps each one at or under it."""
_SCHEMAS_KEPT: Final = 10_000
_INLINE_FIT_BYTES: Final = 256 * 1024


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


class CallRouter:
    """Answers tool calls for one proxy session; the only state is what listings taught it."""

    def __init__(self, router: Router, target: ProxyTarget, server: str, transport: str) -> None:
        self._router = router
        self._target = target
        self._server = server
        self._transport = transport
        self._store = ImageCache(router.cache.directory / "text")
        self._output_schemas: dict[str, bool] = {}
        self._elsewhere: dict[str, dict[str, int]] = {}

    @property
    def gate_sanitizer(self) -> Sanitizer:
        """A fresh sanitizer with the `sanitize` settings of the policy in force."""
        return Sanitizer(self._router.gate.compiled.policy.sanitize)

    def learn_tools(self, listing: Any) -> None:
        """Remember which tools declare an output schema (from a `tools/list` page)."""
        tools = listing.get("tools") if isinstance(listing, Mapping) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                if len(self._output_schemas) >= _SCHEMAS_KEPT:
                    del self._output_schemas[next(iter(self._output_schemas))]
                self._output_schemas[tool["name"]] = tool.get("outputSchema") is not None

    def cleaned_elsewhere(self, counts: Mapping[str, Mapping[str, int]]) -> None:
        """Counts from listings, logs and requests, reported with the next record."""
        for surface, kinds in counts.items():
            mine = self._elsewhere.setdefault(surface, {})
            for kind, count in kinds.items():
                mine[kind] = mine.get(kind, 0) + count

    async def answer(self, call: Call, body: Mapping[str, Any], raw_size: int) -> bytes:
        """The message that answers `call`, given the server's answer `body`."""
        call.answered = time.perf_counter()
        if "error" in body:
            return self._error_answer(call, body["error"], raw_size)
        result = body.get("result")
        if isinstance(result, Mapping) and "task" in result and "content" not in result:
            # A task was created: its result comes later, through `tasks/result`.
            return encode({**body, "result": self.gate_sanitizer.value(result, "task")})
        if not isinstance(result, Mapping):
            return self._malformed(call, "the result is not an object", raw_size)
        return await self._routed(call, result, raw_size)

    async def _routed(self, call: Call, result: Mapping[str, Any], raw_size: int) -> bytes:
        target = self._target
        budget = image_budget(result, raw_size, target.max_result_bytes)
        try:
            routed = await self._router.mcp(
                result,
                provider=target.provider,
                model=target.model,
                tool_name=call.tool,
                image_budget=budget,
                max_edge_px=target.max_edge_px,
                trace=False,
            )
        except InvalidToolResult as error:
            return self._malformed(call, str(error), raw_size)
        wire = routed.to_mcp()
        if routed.structured_content is not None and self._output_schemas.get(call.tool or ""):
            wire["structuredContent"] = routed.structured_content
        if routed.meta:
            wire["_meta"] = dict(routed.meta)
        routed_at = time.perf_counter()
        fit = (call.request_id, wire, target.max_result_bytes, self._store)
        # Fitting a large answer may encode megabytes and write the full text: off the loop.
        # A small one costs microseconds, less than the hop to a thread.
        large = raw_size > _INLINE_FIT_BYTES or bool(routed.images)
        fitted = (
            await asyncio.to_thread(fit_call_response, *fit) if large else fit_call_response(*fit)
        )
        extra: dict[str, Any] = {
            "image_budget": budget,
            "route_ms": _ms(routed_at - (call.answered or 0)),
        }
        record = dict(routed.record)
        if fitted.changes:
            extra["fitted"] = dict(fitted.changes)
            record["execution"] = undelivered(record.get("execution"), fitted, target)
        self._write(record, call, raw_size, len(fitted.message), extra)
        return fitted.message

    def _error_answer(self, call: Call, error: Any, raw_size: int) -> bytes:
        sanitizer = self.gate_sanitizer
        clean = clean_error(error, sanitizer)
        message = clean.get("message", "") if isinstance(clean, Mapping) else ""
        answer = encode({"jsonrpc": "2.0", "id": call.request_id, "error": clean})
        detail = untrusted_line(str(message), 300)
        self.failed(call, "jsonrpc_error", detail, sanitizer.counts(), raw_size, len(answer))
        return answer

    def _malformed(self, call: Call, problem: str, raw_size: int) -> bytes:
        detail = untrusted_line(problem, 300)
        answer = error_response(
            call.request_id,
            INTERNAL_ERROR,
            f"visiongate proxy: the MCP server `{self._server}` sent a malformed "
            f"`tools/call` result: {detail}",
        )
        self.failed(call, "malformed", detail, {}, raw_size, len(answer))
        return answer

    def failed(
        self,
        call: Call,
        outcome: str,
        detail: str,
        counts: Mapping[str, Any] | None = None,
        raw_size: int = 0,
        sent: int = 0,
    ) -> None:
        """The record of a call that brought no result to route (`outcome` says why)."""
        decision = self._router.gate.decide(self._target.provider, self._target.model, trace=False)
        execution: dict[str, Any] = {
            "action": "no_result",
            "outcome": outcome,
            "detail": detail,
            "tool_name": call.tool,
            "is_error": True,
            "images_found": 0,
            "attached": [],
            "refused": [],
            "described": [],
            "media_paths": [],
        }
        record = decision.record(source="mcp", execution=execution, sanitizer=dict(counts or {}))
        self._write(record, call, raw_size, sent, {})

    def _write(
        self,
        record: dict[str, Any],
        call: Call,
        raw_size: int,
        sent: int,
        extra: Mapping[str, Any],
    ) -> None:
        now = time.perf_counter()
        proxy: dict[str, Any] = {
            "server": self._server,
            "transport": self._transport,
            "request_id": call.request_id,
            "latency_ms": _ms(now - call.started),
            "upstream_ms": _ms((call.answered or now) - call.started),
            "bytes_from_server": raw_size,
            "bytes_to_client": sent,
            "max_result_bytes": self._target.max_result_bytes,
            **extra,
        }
        if self._elsewhere:
            proxy["cleaned_elsewhere"], self._elsewhere = self._elsewhere, {}
        record["proxy"] = proxy
        self._router.gate.trace(record)


def undelivered(execution: Any, fitted: Fitted, target: Any) -> Any:
    """The record's `execution` as the client really received it: images the fitting dropped
    (the last ones), or all of them when the answer became an error, move from `attached` to
    `refused` with the reason, so the record never claims pixels that were not sent."""
    if not isinstance(execution, Mapping):
        return execution
    count = len(execution.get("attached") or [])
    dropped = count if "refused" in fitted.changes else fitted.changes.get("images_dropped", 0)
    if not dropped:
        return execution
    why = (
        "the whole answer was over"
        if "refused" in fitted.changes
        else "dropped to keep the text within"
    )
    reason = f"not sent: {why} the client's limit of {target.max_result_bytes:,} bytes per message"
    from .._routed import refuse_attached  # loaded with the router by then

    return refuse_attached(execution, dict.fromkeys(range(count - dropped, count), reason))


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
