"""The façade an agent embeds: one gate, four sources, one routed result each.

    router = Router(Gate.load(config="agent.yaml", trace="decisions.jsonl"))
    routed = await router.mcp(result, provider="anthropic", model="claude-sonnet-4-5")
    messages = router.payload(routed, tool_call_id=call.id).messages

Every call decides through the gate (the lane never depends on the source), carries the lane
out, and writes the decision record with what was done to the gate's trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Final

from mcp.types import CallToolResult

from visiongate.engine import Gate

from ._cache import ImageCache
from ._routed import RoutedResult
from .payloads import Payload, render_payload
from .sources import LaneContext, route_mcp, route_screenshot, route_vision_analyze
from .vision import ScreenMemory, VisionBackend, backend_from_config

__all__ = ["Router"]

_BACKENDS_KEPT: Final = 32


class Router:
    """Routes tool-produced images for one gate; safe to share between tasks and threads.

    `cache` is the image cache (a directory or an `ImageCache`; default `$VISIONGATE_CACHE_DIR`
    or `~/.cache/visiongate/images`). `vision` is the auxiliary backend for the text lane's
    `describe`; by default it is built from the agent config's `auxiliary.vision`.
    """

    def __init__(
        self,
        gate: Gate,
        *,
        cache: ImageCache | str | Path | None = None,
        vision: VisionBackend | None = None,
    ) -> None:
        self._gate = gate
        self._cache = cache if isinstance(cache, ImageCache) else ImageCache(cache)
        self._vision = vision
        self._backends: dict[tuple[str, str], VisionBackend] = {}
        self._lock = threading.Lock()
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
        result: CallToolResult,
        *,
        provider: str,
        model: str,
        tool_name: str | None = None,
        seen_hashes: Iterable[str] = (),
    ) -> RoutedResult:
        """Route an MCP tool result (`mcp.types.CallToolResult`).

        `seen_hashes`: SHA-256 of images already in the conversation (the `sha256` of earlier
        attached images); such an image is not attached again, and the text says so."""
        context = self._context("mcp", provider, model, seen_hashes)
        return self._traced(await route_mcp(result, context, tool_name=tool_name))

    async def mcp_text(
        self, result: CallToolResult, *, provider: str, model: str, tool_name: str | None = None
    ) -> str:
        """The routed text only (`MEDIA:` paths, notes, descriptions): for plugin callers that
        must keep receiving a string. Attached pixels, if any, are not in it."""
        return (await self.mcp(result, provider=provider, model=model, tool_name=tool_name)).text

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
    ) -> RoutedResult:
        """Route a `computer_use` or `browser` screenshot (`text`: the tool's own output)."""
        context = self._context(source, provider, model, seen_hashes)
        return self._traced(await route_screenshot(image, context, path=path, text=text))

    async def vision_analyze(
        self, image: bytes, question: str, *, provider: str, model: str, path: str | None = None
    ) -> RoutedResult:
        """Route a `vision_analyze` call: the image and the question about it."""
        context = self._context("vision_analyze", provider, model)
        return self._traced(await route_vision_analyze(image, question, context, path=path))

    def payload(
        self,
        result: RoutedResult,
        api: str | None = None,
        *,
        tool_call_id: str = "call_0",
        tool_name: str | None = None,
    ) -> Payload:
        """The provider tool-result message(s); `api` defaults to the route's own shape."""
        return render_payload(
            result,
            api,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            registry=self._gate.resolver.registry,
        )

    def _context(
        self, source: str, provider: str, model: str, seen_hashes: Iterable[str] = ()
    ) -> LaneContext:
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
            seen_hashes=frozenset(seen_hashes),
            screens=self._screens,
        )

    def _traced(self, result: RoutedResult) -> RoutedResult:
        self._gate.trace(dict(result.record))
        return result

    def _vision_factory(self, provider: str, model: str) -> Callable[[], VisionBackend]:
        if self._vision is not None:
            backend = self._vision
            return lambda: backend
        return lambda: self._configured_backend(provider, model)

    def _configured_backend(self, provider: str, model: str) -> VisionBackend:
        """The backend `auxiliary.vision` names, built once per main provider and model (its
        description cache lives in it). Raises `VisionUnavailable` when the config is unusable."""
        key = (provider, model)
        with self._lock:
            found = self._backends.get(key)
        if found is not None:
            return found
        config = self._gate.resolver.config.raw
        backend = backend_from_config(config, main_provider=provider, main_model=model)
        with self._lock:
            if len(self._backends) >= _BACKENDS_KEPT:
                del self._backends[next(iter(self._backends))]
            return self._backends.setdefault(key, backend)
