"""One proxy session: the client on this process's stdio (or one session of the gateway's
HTTP endpoint, `relay_session`), the server over stdio or HTTP.

Start-up is ordered for a fast handshake: the command line starts the server first
(`mcp._child.start_server`, a fork and an exec, before the engine is even imported), then
loads the gate while the server boots; the relay needs only the policy's `sanitize` settings
to clean the server's `initialize` answer. Once the first answer has reached the client, a
warm-up thread says the operator's start-up warnings (resolving the target loads the model
catalog and the provider registry) and builds the tool-call modules, the router, the image
stage and the vision backends (about 0.3 s of imports; `DeferredCalls`), before the first
tool result needs them.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TextIO

from visiongate.kernel._display import visible

from ..mcp._child import Child, SpawnError, server_label, start_server
from ..sanitize._line import untrusted_line
from ..sanitize._sanitizer import Sanitizer
from ._call import ProxyTarget
from ._downstream import Downstream, open_downstream
from ._upstream import Unstarted, Upstream, http_upstream, stdio_upstream
from .relay import Relay, log

if TYPE_CHECKING:
    from visiongate.adapters._router import Router
    from visiongate.adapters.vision import VisionBackend
    from visiongate.engine import Gate

    from ._call import Call
    from ._calls import CallRouter

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "DeferredCalls",
    "ProxyOptions",
    "relay_session",
    "serve",
    "target_notices",
]

DEFAULT_TIMEOUT_S: Final = 120.0
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""The longest message read from either side; a longer one is skipped and answered."""
NOTICES_WITHOUT_ANSWER_S: Final = 2.0
"""How long the start-up warnings wait for the first answer before they are said anyway."""
IDLE_S: Final = 0.03
"""How long the relay waits for the first answer before it uses the wait: a server that
answers at once has answered by then (its answer is read as soon as the relay runs)."""


@dataclass(frozen=True)
class ProxyOptions:
    """What `visiongate proxy` was asked to do."""

    target: ProxyTarget
    command: tuple[str, ...] = ()
    """The server's command line (stdio), or empty with `url`."""
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT_S
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    watch_policy: bool = False
    """Reload the policy file before each tool call (and poll it): edits apply to the next."""
    cache_dir: str | None = None
    """The image cache (None: `$VISIONGATE_CACHE_DIR` or the default)."""
    image_tool: bool = True
    """Offer the proxy's own tool for images kept out (`visiongate_view_image`)."""


async def serve(
    gate: Gate,
    options: ProxyOptions,
    *,
    started: Child | SpawnError | None = None,
    input_fd: int = 0,
    output_fd: int = 1,
    notices: Callable[[], None] | None = None,
) -> int:
    """Relay until the client closes its input (0) or the server goes away, or could not be
    started or reached (2: the client's requests are answered with the reason first).

    `notices` says the operator's start-up warnings: called once, in the warm-up thread, when
    the first answer is on its way or the server has taken `NOTICES_WITHOUT_ANSWER_S` without
    one (the caller says them at the end of a session that never got that far)."""
    downstream = await open_downstream(options.max_message_bytes, input_fd, output_fd)
    try:
        return await relay_session(gate, options, downstream, started=started, notices=notices)
    finally:
        await downstream.close()


async def relay_session(
    gate: Gate,
    options: ProxyOptions,
    downstream: Downstream,
    *,
    started: Child | SpawnError | None = None,
    session: Mapping[str, Any] | None = None,
    vision: Callable[[], VisionBackend | None] | None = None,
    errlog: TextIO | None = None,
    relay_ended: Callable[[], None] | None = None,
    upstream_context: AbstractAsyncContextManager[Any] | None = None,
    notices: Callable[[], None] | None = None,
) -> int:
    """One client's session with one server (started now, or `started` already, or the
    one `upstream_context` gives: a gateway's shared server, `adapters.gateway._shared`): the
    relay runs until either side ends it; the server is stopped on the way out, whatever
    happened (a shared one is only detached from).

    `session` goes into every record (`proxy.session`), `vision` gives the auxiliary backend
    (None: the router builds its own from the config), `errlog` takes the server's standard
    error (default: this process's), `relay_ended` is called once the relay is done, before
    the server is stopped, and `notices` as `serve` says."""
    async with upstream_context or _upstream(options, started, errlog) as upstream:
        calls = DeferredCalls(
            gate,
            options,
            lambda: _call_router(gate, options, upstream, session=session, vision=vision),
            notices=notices,
        )
        relay = Relay(
            downstream,
            upstream,
            calls,  # type: ignore[arg-type]  # a CallRouter, built when first needed
            gate,
            timeout=options.timeout,
            max_result_bytes=options.target.max_result_bytes,
            watch_policy=options.watch_policy,
        )
        warming = asyncio.create_task(_warm_after_first_answer(downstream, calls))
        try:
            return await relay.run()
        finally:
            warming.cancel()
            if relay_ended is not None:
                relay_ended()


def _call_router(
    gate: Gate,
    options: ProxyOptions,
    upstream: Upstream,
    *,
    session: Mapping[str, Any] | None = None,
    vision: Callable[[], VisionBackend | None] | None = None,
) -> CallRouter:
    from visiongate.adapters._router import Router

    from ._calls import CallRouter
    from ._view import VIEW_TOOL

    image_tool = VIEW_TOOL if options.image_tool else None
    backend = vision() if vision is not None else None
    router: Router = Router(gate, cache=options.cache_dir, image_tool=image_tool, vision=backend)
    gate.resolver  # noqa: B018 - loads the catalog and registry now, not at the first call
    return CallRouter(
        router,
        options.target,
        upstream.label,
        upstream.transport,
        image_tool=options.image_tool,
        session=session,
    )


async def _warm_after_first_answer(downstream: Downstream, calls: DeferredCalls) -> None:
    if not await _answered_within(downstream, IDLE_S):
        # A server still booting: the rules for text that is not ASCII (a handshake with an
        # emoji or a dash) are compiled while the relay has nothing else to do.
        await asyncio.to_thread(calls.prepare_cleaning)
        if not await _answered_within(downstream, NOTICES_WITHOUT_ANSWER_S - IDLE_S):
            await asyncio.to_thread(calls.say_notices)  # a slow server: the warnings now
            await downstream.first_sent.wait()
    await asyncio.to_thread(calls.warm)


async def _answered_within(downstream: Downstream, seconds: float) -> bool:
    try:
        await asyncio.wait_for(downstream.first_sent.wait(), seconds)
    except TimeoutError:
        return False
    return True


@asynccontextmanager
async def _upstream(
    options: ProxyOptions, started: Child | SpawnError | None, errlog: TextIO | None = None
) -> AsyncIterator[Any]:
    if options.url is not None:
        async with http_upstream(
            options.url, options.headers, max_message_bytes=options.max_message_bytes
        ) as http:
            yield http
        return
    if started is None:
        started = start_server(options.command)
    if isinstance(started, SpawnError):
        log(str(started))
        yield Unstarted(server_label(options.command), started.reason)
        return
    async with stdio_upstream(
        started, max_message_bytes=options.max_message_bytes, errlog=errlog
    ) as stdio:
        yield stdio


class DeferredCalls:
    """The session's `CallRouter`, built on first need (or by the warm-up thread).

    Cleaning the handshake needs only the policy's `sanitize` settings; what listings teach
    and the counts of what was cleaned before the router exists are kept and handed over."""

    def __init__(
        self,
        gate: Gate,
        options: ProxyOptions,
        build: Callable[[], CallRouter],
        *,
        notices: Callable[[], None] | None = None,
    ) -> None:
        self._gate = gate
        self._image_tool = options.image_tool
        self._build = build
        self._lock = threading.Lock()
        self._real: CallRouter | None = None
        self._early: list[tuple[str, Any]] = []
        self._notices = notices

    @property
    def gate_sanitizer(self) -> Sanitizer:
        """A fresh sanitizer with the `sanitize` settings of the policy in force."""
        return Sanitizer(self._gate.compiled.policy.sanitize)

    def warm(self) -> None:
        """The warm-up thread's work once the first answer is on its way: the router (and the
        modules the first tool call needs), then the start-up warnings, which resolving the
        target for the router has made cheap: a tool call sent at once waits for less."""
        try:
            self.build()
        finally:
            self.say_notices()

    def prepare_cleaning(self) -> None:
        """Compile the policy's rules for text that is not ASCII (see `Sanitizer.prepare`)."""
        self.gate_sanitizer.prepare()

    def say_notices(self) -> None:
        with self._lock:
            notices, self._notices = self._notices, None
        if notices is not None:
            notices()

    def build(self) -> CallRouter:
        with self._lock:
            if self._real is None:
                real = self._build()
                for method, argument in self._early:
                    getattr(real, method)(argument)
                self._early, self._real = [], real
            return self._real

    def learn_tools(self, listing: Any) -> None:
        self._later("learn_tools", listing)

    def ask_upstream(self, ask: Any) -> None:
        self._later("ask_upstream", ask)

    def is_local(self, method: str, params: Any) -> bool:
        """Whether the request is for the proxy's own tool: asked of every request, so the
        router is built only for a call that names that tool."""
        if self._real is not None:
            return self._real.is_local(method, params)
        if method != "tools/call" or not self._image_tool or not isinstance(params, Mapping):
            return False
        from ._view import VIEW_TOOL

        return params.get("name") == VIEW_TOOL and self.build().is_local(method, params)

    def cleaned_elsewhere(self, counts: Mapping[str, Mapping[str, int]]) -> None:
        self._later("cleaned_elsewhere", counts)

    def _later(self, method: str, argument: Any) -> None:
        with self._lock:
            if self._real is None:
                self._early.append((method, argument))
                return
        getattr(self._real, method)(argument)

    async def answer(self, call: Call, body: Mapping[str, Any], raw_size: int) -> bytes:
        real = self._real if self._real is not None else await asyncio.to_thread(self.build)
        return await real.answer(call, body, raw_size)

    def failed(self, call: Call, *args: Any, **details: Any) -> None:
        try:
            real = self.build()
        except Exception as error:  # the record is lost, the session is not
            text = untrusted_line(f"{type(error).__name__}: {error}", 200)
            print(f"visiongate proxy: cannot record the failed call: {text}", file=sys.stderr)
            return
        real.failed(call, *args, **details)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.build(), name)


# -- what the operator must read ------------------------------------------------------------
# A decision's warnings (the config's near misses and fail-closed errors, the did-you-mean for
# a provider or model nobody knows, the operator's contradictions) are in every record, but
# nobody reads a trace they did not ask for: the proxy says them on stderr at start, and the
# gateway for each other target a session names, once (`gateway._gateway.NoticeBoard`).


def target_notices(
    gate: Gate, provider: str, model: str, *, with_config: bool = True
) -> tuple[str, ...]:
    """One line per warning of the decisions for this target (`error: ...` for a mistake the
    gate fails closed on), safe to print; without the config's own warnings, which concern
    every target, unless `with_config`. Resolving may ask a local runtime (bounded, and cached
    for the decisions that follow)."""
    warnings = gate.resolver.resolve(provider, model).warnings
    said = () if with_config else gate.resolver.config.decision_warnings
    return tuple(
        visible(text if text.startswith("error: ") else f"warning: {text}")
        for text in dict.fromkeys(warnings)
        if text not in said
    )
