"""The façade an agent embeds: one gate, four sources, one routed result each.

    router = Router(Gate.load(config="agent.yaml", trace="decisions.jsonl"))
    routed = await router.mcp(result, provider="anthropic", model="claude-sonnet-4-5")
    messages = router.payload(routed, tool_call_id=call.id).messages

Every call decides through the gate (the lane never depends on the source), carries the lane
out through the payload's last-resort guard, and only then writes one decision record with
what was done to the gate's trace: the record says what the payload will carry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from visiongate.engine import Gate

from ._arguments import check_api, check_image, check_positive, check_route, check_seen_hashes
from ._cache import ImageCache
from ._history import BoundedHistory, bound_history
from ._part_request import PartRequest
from ._resource_read import (
    RoutedResource,
    as_tool_result,
    image_blob,
    read_contents,
    resource_contents,
    shares,
)
from ._routed import RoutedResult
from .images._process import image_part
from .payloads import Payload, ToolCall, render_payload, render_turn
from .sanitize._listings import sanitize_prompts, sanitize_resources, sanitize_tools
from .sanitize._sanitizer import Sanitizer
from .sources import LaneContext, route_mcp, route_screenshot, route_vision_analyze
from .sources._screenshots import SCREENSHOT_SOURCES
from .vision import ScreenMemory, VisionBackend
from .vision._cache import BackendPool, CachedVisionBackend
from .wire._edge import read_tool_result

__all__ = ["Router"]

_Listing = TypeVar("_Listing")


class Router:
    """Routes tool-produced images for one gate; safe to share between tasks and threads.

    `cache` is the image cache (a directory or an `ImageCache`; default `$VISIONGATE_CACHE_DIR`
    or `~/.cache/visiongate/images`). `vision` is the auxiliary backend for the text lane's
    `describe`; by default it is built from the agent config's `auxiliary.vision`.
    `image_tool` is the tool the model can call with a `MEDIA:` path to see an image that was
    kept out (default `vision_analyze`, wired to `Router.vision_analyze`); the notes name it,
    and None means the model has no such tool, so no note offers one.
    """

    def __init__(
        self,
        gate: Gate,
        *,
        cache: ImageCache | str | Path | None = None,
        vision: VisionBackend | None = None,
        image_tool: str | None = "vision_analyze",
    ) -> None:
        self._gate = gate
        self._facts_ready = False
        self._image_tool = image_tool
        self._cache = cache if isinstance(cache, ImageCache) else ImageCache(cache)
        self._vision = vision
        self._backends = BackendPool(_pooled_backend)
        # Recent screenshots per source, so the text lane re-reads only what changed; per
        # router, so two agents (or two routers over one backend) never mix their screens.
        self._screens = ScreenMemory()

    @property
    def gate(self) -> Gate:
        return self._gate

    @property
    def cache(self) -> ImageCache:
        return self._cache

    async def mcp(
        self,
        result: object,
        *,
        provider: str,
        model: str,
        tool_name: str | None = None,
        seen_hashes: Iterable[str] = (),
        api: str | None = None,
        image_budget: int | None = None,
        max_edge_px: int | None = None,
        output_schema: Mapping[str, Any] | None = None,
        trace: bool = True,
    ) -> RoutedResult:
        """Route an MCP tool result: the SDK's `CallToolResult` (1.x or 2.x), a wire dict
        (camelCase, `_meta`) or any object with the same fields (the FastMCP client's result).
        It is validated first: a malformed one raises `ValueError` naming the first bad field,
        and no decision is recorded.

        `seen_hashes`: SHA-256 of images already in the conversation (the `sha256` of earlier
        attached images); such an image is not attached again, and the text says so. `api`:
        the payload shape you will render (default: the route's own); images are fitted and
        guarded for it before the record is written. `image_budget`: base64 characters the
        attached images may take together (they share it; a client's message cap), on top of
        each image's own budget; `max_edge_px`: a further pixel ceiling per image.
        `output_schema`: the tool's declared `outputSchema` (from `tools/list`): the routed
        structured content is checked against it (`routed.client.schema_problem`, the record's
        `structured_content`), `to_mcp()` carries it, and the text has no `structured
        content:` line. With `trace=False` no record is written: write `routed.record` (with
        your additions) yourself, as `Gate.decide(trace=False)` does."""
        check_positive("image_budget", image_budget)
        check_positive("max_edge_px", max_edge_px)
        await self._facts_loaded()
        context = self._context("mcp", provider, model, seen_hashes, api)
        checked = read_tool_result(result)
        if image_budget is not None or max_edge_px is not None:
            context = replace(context, result_budget=image_budget, max_edge_px=max_edge_px)
        routed = await route_mcp(checked, context, tool_name=tool_name, output_schema=output_schema)
        return self._traced(routed) if trace else routed

    async def mcp_resource(
        self,
        result: object,
        *,
        provider: str,
        model: str,
        seen_hashes: Iterable[str] = (),
        api: str | None = None,
        image_budget: int | None = None,
        max_edge_px: int | None = None,
        trace: bool = True,
    ) -> RoutedResource:
        """Route a `resources/read` result (the SDK's `ReadResourceResult` or a wire dict) as
        the proxy does: its text cleaned as by `sanitize_resources`, each image blob (PNG,
        JPEG, GIF, WebP, BMP, TIFF) routed as a one-image `mcp` tool result, through the same
        image stage, lanes and payload guard; an SVG or other blob is kept as it came.
        `image_budget` is shared equally by the blobs; the other arguments as for `mcp`.
        One decision record per blob, its `execution.resource_uri` naming the resource. A
        result without contents raises `ValueError` and records nothing."""
        check_positive("image_budget", image_budget)
        contents = self.sanitize_resources({"contents": read_contents(result)})["contents"]
        share = shares(contents, image_budget)
        routed_contents: list[Mapping[str, Any]] = []
        routed: list[RoutedResult] = []
        for content in contents:
            if not image_blob(content):
                routed_contents.append(content)
                continue
            one = await self.mcp(
                as_tool_result(content),
                provider=provider,
                model=model,
                seen_hashes=seen_hashes,
                api=api,
                image_budget=share,
                max_edge_px=max_edge_px,
                trace=False,
            )
            execution = {**one.record.get("execution", {}), "resource_uri": str(content.get("uri"))}
            one = replace(one, record={**one.record, "execution": execution})
            routed.append(self._traced(one) if trace else one)
            routed_contents.extend(resource_contents(content, one.to_mcp()))
        return RoutedResource(tuple(routed_contents), tuple(routed))

    async def mcp_text(
        self, result: object, *, provider: str, model: str, tool_name: str | None = None
    ) -> str:
        """What a caller that takes a string really gets: the tool's text, a `MEDIA:` line per
        image, and descriptions where the lane says `describe`. A string carries no pixels,
        so in the native lane the images stay as paths and none is fitted; one record is
        written, and it says so (`delivery: string`, nothing attached)."""
        await self._facts_loaded()
        context = self._context("mcp", provider, model, delivery="string")
        checked = read_tool_result(result)
        return self._traced(await route_mcp(checked, context, tool_name=tool_name)).text

    async def screenshot(
        self,
        image: bytes,
        *,
        source: str,
        provider: str,
        model: str,
        path: str | None = None,
        text: str = "",
        seen_hashes: Iterable[str] = (),
        api: str | None = None,
    ) -> RoutedResult:
        """Route a `computer_use` or `browser` screenshot (`text`: the tool's own output)."""
        check_image(image)
        check_route(source, provider, model, api, SCREENSHOT_SOURCES, "screenshot source")
        await self._facts_loaded()
        context = self._context(source, provider, model, seen_hashes, api)
        return self._traced(await route_screenshot(image, context, path=path, text=text))

    async def vision_analyze(
        self,
        image: bytes,
        question: str,
        *,
        provider: str,
        model: str,
        path: str | None = None,
        api: str | None = None,
        image_budget: int | None = None,
        max_edge_px: int | None = None,
        trace: bool = True,
        part: PartRequest | None = None,
    ) -> RoutedResult:
        """Route a `vision_analyze` call: the image and the question about it.
        `image_budget`, `max_edge_px` and `trace` as for `mcp`. With `part`, only that region
        of the image (or its rows from an offset) is routed, cut from the original at 1:1 and
        fitted on its own; `PartError` (a `ValueError`) when the image has no such part."""
        check_image(image)
        await self._facts_loaded()
        context = self._context("vision_analyze", provider, model, api=api)
        if image_budget is not None or max_edge_px is not None:
            context = replace(context, result_budget=image_budget, max_edge_px=max_edge_px)
        note = None
        if part is not None:
            cut = await asyncio.to_thread(image_part, image, part)
            image, note = cut.data, cut.note
        routed = await route_vision_analyze(image, question, context, path=path, note=note)
        return self._traced(routed) if trace else routed

    def payload(
        self,
        result: RoutedResult,
        api: str | None = None,
        *,
        tool_call_id: str = "call_0",
        tool_name: str | None = None,
    ) -> Payload:
        """The provider tool-result message(s); `api` defaults to the shape the result was
        routed for. Rendering another shape can withhold more images (its formats and limits
        differ); then the record is written again, amended, so it never claims an image the
        payload does not carry (`render_payload` does the same)."""
        check_api(api)
        return render_payload(
            result,
            api,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            registry=self._gate.resolver.registry,
            trace=self._gate.trace,
        )

    def render_turn(self, results: Sequence[ToolCall], api: str | None = None) -> Payload:
        """The messages answering one assistant turn: `results` are `(routed, call_id)` or
        `(routed, call_id, tool_name)`, in call order; each shape gets the turn as its API
        wants it (one user message of `tool_result` blocks for Anthropic, every `tool`
        message before the images for OpenAI Chat, one content of `functionResponse` parts
        for Gemini, ...). Records are amended as by `payload`."""
        check_api(api)
        return render_turn(
            results, api, registry=self._gate.resolver.registry, trace=self._gate.trace
        )

    def bound_history(self, conversation: Sequence[Mapping[str, Any]], api: str) -> BoundedHistory:
        """The conversation to send next (messages, items or contents in the `api` shape) with
        its images bounded by the policy's `execution.keep_recent_images` and
        `execution.max_calls_per_image`: older images and repeats become their `MEDIA:` path
        and a one-line note naming the router's `image_tool`, removed in chunks so the cached
        prefix stays stable. The input is not changed; call it on the whole history before
        each request."""
        check_api(api)
        execution = self._gate.compiled.policy.execution
        return bound_history(
            conversation,
            api,
            keep_recent_images=execution.keep_recent_images,
            max_calls_per_image=execution.max_calls_per_image,
            cache=self._cache,
            image_tool=self._image_tool,
        )

    def sanitize_tools(self, listing: _Listing) -> _Listing:
        """A `tools/list` result, a tool or a list of tools (the SDK's models of any version,
        or wire dicts) with every string the model reads cleaned by the policy's `sanitize`
        rules: names, descriptions, input and output schemas, annotations, `_meta`. Tool
        descriptions are the classic injection surface: clean them before the model sees them.
        Returns the same shape it was given (the same object when nothing changed)."""
        return sanitize_tools(listing, self._sanitizer())

    def sanitize_resources(self, listing: _Listing) -> _Listing:
        """`resources/list`, `resources/templates/list` or `resources/read` results, resources
        or templates, cleaned like `sanitize_tools`."""
        return sanitize_resources(listing, self._sanitizer())

    def sanitize_prompts(self, listing: _Listing) -> _Listing:
        """`prompts/list` or `prompts/get` results or prompts, cleaned like `sanitize_tools`."""
        return sanitize_prompts(listing, self._sanitizer())

    def _sanitizer(self) -> Sanitizer:
        return Sanitizer(self._gate.compiled.policy.sanitize)

    async def _facts_loaded(self) -> None:
        """Load the catalog and registry off the event loop before the first decision: it
        takes 80-260 ms, and every other task of the loop would wait (issue 36, item 11)."""
        if not self._facts_ready:
            await asyncio.to_thread(lambda: self._gate.resolver)
            self._facts_ready = True

    def _context(
        self,
        source: str,
        provider: str,
        model: str,
        seen_hashes: Iterable[str] = (),
        api: str | None = None,
        delivery: Literal["message", "string"] = "message",
    ) -> LaneContext:
        check_route(source, provider, model, api)
        hashes = check_seen_hashes(seen_hashes)
        decision = self._gate.decide(provider, model, trace=False)
        # The settings of the policy that decided, even if a reload swapped it since.
        policy = decision.full_policy or self._gate.compiled.policy
        return LaneContext(
            decision=decision,
            source=source,
            execution=policy.execution,
            sanitize=policy.sanitize,
            cache=self._cache,
            vision=self._vision_factory(provider, model),
            seen_hashes=hashes,
            api=api,
            registry=self._gate.resolver.registry,
            delivery=delivery,
            screens=self._screens,
            image_tool=self._image_tool,
        )

    def _traced(self, result: RoutedResult) -> RoutedResult:
        self._gate.trace(dict(result.record))
        return replace(result, sink=self._gate.trace)

    def _vision_factory(self, provider: str, model: str) -> Callable[[], VisionBackend]:
        if self._vision is not None:
            backend = self._vision
            return lambda: backend
        return lambda: self._configured_backend(provider, model)

    def _configured_backend(self, provider: str, model: str) -> VisionBackend:
        """The backend `auxiliary.vision` names, built once per main provider and model (its
        description cache lives in it). Raises `VisionUnavailable` when the config is unusable."""
        return self._backends.get(self._gate.resolver.config.raw, provider, model)


def _pooled_backend(config: Mapping[str, Any], provider: str, model: str) -> CachedVisionBackend:
    """The pool's builder, imported on first use: the backends' modules (httpx, OCR) are
    loaded only by a router that describes an image."""
    from .vision._config import pooled_backend

    return pooled_backend(config, provider, model)
