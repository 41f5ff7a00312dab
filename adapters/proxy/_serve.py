"""One proxy session: the client on this process's stdio, the server over stdio or HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

from .._router import Router
from ._calls import CallRouter, ProxyTarget
from ._downstream import open_downstream
from ._relay import Relay
from ._upstream import Upstream, http_upstream, stdio_upstream

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "DEFAULT_TIMEOUT_S", "ProxyOptions", "serve"]

DEFAULT_TIMEOUT_S: Final = 120.0
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""The longest message read from either side; a longer one is skipped and answered."""


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
    image_tool: bool = True
    """Offer the proxy's own tool for images kept out (`visiongate_view_image`)."""


async def serve(
    router: Router, options: ProxyOptions, *, input_fd: int = 0, output_fd: int = 1
) -> int:
    """Relay until the client closes its input (0) or the server goes away (2). Raises
    `OSError` when the server cannot be started."""
    downstream = await open_downstream(options.max_message_bytes, input_fd, output_fd)
    try:
        async with _upstream(options) as upstream:
            calls = CallRouter(
                router,
                options.target,
                upstream.label,
                upstream.transport,
                image_tool=options.image_tool,
            )
            relay = Relay(
                downstream,
                upstream,
                calls,
                router.gate,
                timeout=options.timeout,
                max_result_bytes=options.target.max_result_bytes,
                watch_policy=options.watch_policy,
            )
            return await relay.run()
    finally:
        await downstream.close()


@asynccontextmanager
async def _upstream(options: ProxyOptions) -> AsyncIterator[Upstream]:
    if options.url is not None:
        async with http_upstream(
            options.url, options.headers, max_message_bytes=options.max_message_bytes
        ) as http:
            yield http
    else:
        async with stdio_upstream(
            options.command, max_message_bytes=options.max_message_bytes
        ) as stdio:
            yield stdio
