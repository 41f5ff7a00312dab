"""`visiongate proxy`: the gate in front of any MCP client, as an MCP server over stdio.

A raw JSON-RPC relay (`relay/`) between the client (`_downstream`, this process's stdio) and
the server (`_upstream`: a child over stdio, or Streamable HTTP through the SDK's transport).
It forwards every message as it came except what it must change: the server's text surfaces
are cleaned by the policy's `sanitize` rules (`_surfaces`), tool results are routed by the
gate and fitted to the client's size limit (`_calls`, `_call`, `_fit`), one decision record
per call. `_tools` keeps what `tools/list` said (output schemas, widened where routing would
break them) and lists the proxy's own tool (`_view`); `_own` sends the server the proxy's own
requests. `_config` prints the client configuration snippets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from ._call import MANY_IMAGE_EDGE_PX, ProxyTarget
    from ._serve import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TIMEOUT_S, ProxyOptions, serve

# Imported on first use: the relay's modules load before the router's (see `_serve`).
_HOMES: dict[str, str] = {
    "MANY_IMAGE_EDGE_PX": "._call",
    "ProxyTarget": "._call",
    "DEFAULT_MAX_MESSAGE_BYTES": "._serve",
    "DEFAULT_TIMEOUT_S": "._serve",
    "ProxyOptions": "._serve",
    "serve": "._serve",
}

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "MANY_IMAGE_EDGE_PX",
    "ProxyOptions",
    "ProxyTarget",
    "serve",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
