"""Tool results through the gate: route, fit to the client's limit, write one record per call.

A `tools/call` answer (or the `tasks/result` of a task that ran a tool) is routed by the
`Router` for the configured provider and model, exactly as an embedded agent's would be: the
native lane attaches fitted images (sharing what the text leaves of the client's limit, each at
or under the provider's many-image pixel limit), the text lane gives `MEDIA:` paths or
descriptions. The client gets `RoutedResult.to_mcp()`: valid MCP content, whatever the server
sent, with the blocks for the user (and audio) as they came. Structured content is routed like
the content (the same images, fitted or as their `MEDIA:` paths) and is kept for tools that
declare an output schema, checked against the schema the client was given (`tools/list`, where
`wire._schemas` widened what routing could break); elsewhere it is a JSON line of the text,
because some clients show only the structured content when it is present and drop the images.
An answer that still does not fit is routed again with its images fitted harder, and one that
cannot be made to satisfy the schema becomes an error saying why.

The proxy's own tool (`_view`) is listed on the last page of `tools/list` and answered here.

Every call ends in one decision record, the library's schema plus a `proxy` object (server,
transport, latency, bytes, what fitting changed, what was cleaned elsewhere since the last
record, and behind the gateway the session: its id and the client's `clientInfo`): a routed
result, an error result, a JSON-RPC error, a timeout, a cancellation, a malformed answer or a
server that went away.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .._cache import ImageCache
from .._part_request import PartError
from ..sanitize._line import untrusted_line
from ..sanitize._sanitizer import Sanitizer
from ..wire._wire import InvalidToolResult
from ._call import (
    Ask,
    Call,
    ProxyTarget,
    ms,
    out_of_time,
    schema_problem,
    sent_image_chars,
    undelivered,
)
from ._fit import Fitted, fit_call_response, image_budget
from ._jsonrpc import INTERNAL_ERROR, encode, error_response
from ._surfaces import clean_error, clean_result
from ._tools import ToolListing
from ._view import VIEW_TOOL, ImageViews

if TYPE_CHECKING:  # the router and the image stage load after the handshake (see `_serve`)
    from .._routed import RoutedResult
    from .._router import Router
    from ..wire._schemas import Relaxed

__all__ = ["Call", "CallRouter", "ProxyTarget"]

_INLINE_FIT_BYTES: Final = 256 * 1024
_FIT_ATTEMPTS: Final = 3
"""Routings of one result at most: as estimated, then twice with the images fitted harder."""
_HARDER_MARGIN: Final = 16 * 1024
_LISTING_PAGES: Final = 100


class CallRouter:
    """Answers tool calls for one proxy session; the only state is what listings taught it."""

    def __init__(
        self,
        router: Router,
        target: ProxyTarget,
        server: str,
        transport: str,
        *,
        image_tool: bool = True,
        session: Mapping[str, Any] | None = None,
    ) -> None:
        self._router = router
        self._session = dict(session) if session is not None else None
        self._target = target
        self._server = server
        self._transport = transport
        self._store = ImageCache(router.cache.directory / "text")
        self._tools = ToolListing(offer_view=image_tool)
        self._ask: Ask | None = None
        self._listing: asyncio.Task[None] | None = None
        self._elsewhere: dict[str, dict[str, int]] = {}
        self._views = ImageViews() if image_tool else None

    @property
    def gate_sanitizer(self) -> Sanitizer:
        """A fresh sanitizer with the `sanitize` settings of the policy in force."""
        return Sanitizer(self._router.gate.compiled.policy.sanitize)

    def ask_upstream(self, ask: Ask) -> None:
        """How to send the server a request of the proxy's own (`_own.OwnRequests.request`)."""
        self._ask = ask

    async def _learn_schema(self, tool: str | None) -> None:
        """List the server's tools ourselves when `tool` was called before the client listed
        it: whether it declares an output schema decides what a valid answer is. One listing
        at a time; a tool still unknown after it declares none."""
        if self._ask is None or tool is None or self._tools.knows(tool):
            return
        if self._listing is None or self._listing.done():
            self._listing = asyncio.ensure_future(self._list_all(self._ask))
        await asyncio.shield(self._listing)
        self._tools.assume_unlisted(tool)

    async def _list_all(self, ask: Ask) -> None:
        cursor: Any = None
        for _ in range(_LISTING_PAGES):
            page = await ask("tools/list", {"cursor": cursor} if cursor is not None else {})
            if page is None:
                return
            try:
                self._tools.listed(clean_result("tools/list", page, self.gate_sanitizer))
            except (ValueError, TypeError, RecursionError):
                return  # a listing that cannot be read teaches nothing; the call goes on
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                return

    def listed_tools(self, listing: Any) -> Any:
        """A `tools/list` page as the client gets it (`_tools.ToolListing.listed`)."""
        return self._tools.listed(listing)

    def is_local(self, method: str, params: Any) -> bool:
        """True for a `tools/call` of the proxy's own tool: answered here, not sent upstream."""
        return method == "tools/call" and self._tools.is_local(params)

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
        if result.get("structuredContent") is not None:
            await self._learn_schema(call.tool)
        schema = self._tools.schema(call.tool)
        budget = image_budget(result, raw_size, target.max_result_bytes)
        attempts: list[int] = []
        while True:
            attempts.append(budget)
            try:
                routed = await self._router.mcp(
                    result,
                    provider=target.provider,
                    model=target.model,
                    tool_name=call.tool,
                    image_budget=budget,
                    max_edge_px=target.max_edge_px,
                    output_schema=schema.schema if schema is not None else None,
                    trace=False,
                )
            except InvalidToolResult as error:
                return self._malformed(call, str(error), raw_size)
            if routed.client.schema_problem is not None:
                return await self._unschematic(call, routed, result, schema, raw_size)
            fitted = await self._fitted(call, routed, schema, raw_size)
            if not (fitted.shortfall and routed.images and len(attempts) < _FIT_ATTEMPTS):
                break
            budget = max(
                0, min(budget, sent_image_chars(routed)) - fitted.shortfall - _HARDER_MARGIN
            )
        if self._views is not None and "refused" not in fitted.changes:
            self._views.remember(routed.media_paths)  # the paths the model was shown
        extra = self._extra(call, attempts, schema)
        record = dict(routed.record)
        if fitted.changes:
            extra["fitted"] = dict(fitted.changes)
            record["execution"] = undelivered(record.get("execution"), fitted, target)
        self._write(record, call, raw_size, len(fitted.message), extra)
        return fitted.message

    async def _fitted(
        self, call: Call, routed: RoutedResult, schema: Relaxed | None, raw_size: int
    ) -> Fitted:
        wire = routed.to_mcp()
        if routed.meta:
            wire["_meta"] = dict(routed.meta)
        check = (lambda value: schema_problem(schema.schema, value)) if schema else None
        fit = (
            call.request_id,
            wire,
            self._target.max_result_bytes,
            self._store,
            check,
            routed.server_lines,
        )
        # Fitting a large answer may encode megabytes and write the full text: off the loop.
        # A small one costs microseconds, less than the hop to a thread.
        if raw_size > _INLINE_FIT_BYTES or routed.images or routed.client.passed:
            return await asyncio.to_thread(fit_call_response, *fit)
        return fit_call_response(*fit)

    def _extra(self, call: Call, attempts: list[int], schema: Relaxed | None) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "image_budget": attempts[-1],
            "route_ms": ms(time.perf_counter() - (call.answered or 0)),
        }
        if len(attempts) > 1:
            extra["image_budgets_tried"] = attempts
        if schema is not None:
            extra["output_schema"] = (
                {"advertised": "relaxed", "relaxed": list(schema.changes)}
                if schema.changes
                else {"advertised": "as declared"}
            )
        return extra

    async def _unschematic(
        self,
        call: Call,
        routed: RoutedResult,
        result: Mapping[str, Any],
        schema: Relaxed | None,
        raw_size: int,
    ) -> bytes:
        """The error that stands in for a result that does not satisfy the tool's schema, or
        whose check ran out of its bound (then not checked a second time)."""
        assert schema is not None
        problem = routed.client.schema_problem
        own = (
            None
            if out_of_time(problem)
            else await asyncio.to_thread(
                schema_problem, schema.schema, result.get("structuredContent")
            )
        )
        whose = (
            f"the MCP server's own structured content does not satisfy the tool's output "
            f"schema ({untrusted_line(own, 300)})"
            if own is not None
            else f"the routed structured content does not satisfy the tool's output schema "
            f"({untrusted_line(problem or '', 300)})"
        )
        if out_of_time(problem):
            whose = f"its structured content was not checked against the output schema: {problem}"
        answer = error_response(
            call.request_id,
            INTERNAL_ERROR,
            f"visiongate proxy: `{untrusted_line(call.tool or '', 80)}`: {whose}; a result the "
            "client would reject was not sent",
        )
        outcome = "schema_check_timeout" if out_of_time(problem) else "schema_mismatch"
        self.failed(call, outcome, whose, {}, raw_size, len(answer))
        return answer

    async def answer_local(self, request_id: Any, params: Mapping[str, Any]) -> bytes:
        """The answer to a `tools/call` of the proxy's own tool."""
        assert self._views is not None
        call = Call(request_id, VIEW_TOOL)
        call.answered = call.started
        viewed = await asyncio.to_thread(self._views.read, params.get("arguments"))
        if viewed.problem is not None:
            hint = "pass a MEDIA: path from an earlier result"
            return self._view_refused(call, viewed.problem, hint)
        target = self._target
        try:
            routed = await self._router.vision_analyze(
                viewed.data,
                viewed.question,
                provider=target.provider,
                model=target.model,
                path=viewed.path,
                image_budget=image_budget({}, 4_096, target.max_result_bytes),
                max_edge_px=target.max_edge_px,
                trace=False,
                part=viewed.part,
            )
        except PartError as error:
            hint = "`region` is left, top, width, height in the original's pixels"
            return self._view_refused(call, str(error), hint)
        fitted = await self._fitted(call, routed, None, len(viewed.data))
        record = dict(routed.record)
        if fitted.changes:
            record["execution"] = undelivered(record.get("execution"), fitted, target)
        extra = (
            {"local_tool": VIEW_TOOL, "fitted": dict(fitted.changes)}
            if fitted.changes
            else {"local_tool": VIEW_TOOL}
        )
        self._write(record, call, 0, len(fitted.message), extra)
        return fitted.message

    def _view_refused(self, call: Call, problem: str, hint: str) -> bytes:
        text = f"{VIEW_TOOL}: {problem}; {hint}"
        answer = encode(
            {
                "jsonrpc": "2.0",
                "id": call.request_id,
                "result": {"content": [{"type": "text", "text": text}], "isError": True},
            }
        )
        self.failed(call, "refused", problem, {}, 0, len(answer))
        return answer

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
            "latency_ms": ms(now - call.started),
            "upstream_ms": ms((call.answered or now) - call.started),
            "bytes_from_server": raw_size,
            "bytes_to_client": sent,
            "max_result_bytes": self._target.max_result_bytes,
            **extra,
        }
        if self._elsewhere:
            proxy["cleaned_elsewhere"], self._elsewhere = self._elsewhere, {}
        if self._session is not None:
            proxy["session"] = self._session
        record["proxy"] = proxy
        self._router.gate.trace(record)
