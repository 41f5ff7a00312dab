"""`visiongate proxy --listen`: the proxy as a gateway for teams, over MCP Streamable HTTP.

Many clients, each in a session of its own (`Mcp-Session-Id`), each with the model it names
(`X-Visiongate-Provider`/`X-Visiongate-Model`), each with a server of its own (a process per
session for a stdio command, a session per session with a `--url` server), all through the
relay, routing, cleaning, caps and records of `visiongate proxy` (`adapters.proxy`). The HTTP
side is uvicorn, the protocol spoken here (no MCP SDK is imported); the parts:

- `_app`: the ASGI application (the MCP endpoint, `/healthz`, `/readyz`, `/metrics`), and
  `_body`: a POST's body read and checked before the transport has it;
- `_transport`: one session's Streamable HTTP exchanges (POST, GET, DELETE), and `_exchange`:
  an answer written as one JSON body or an SSE stream;
- `_security`: the front door (Host, Origin, bearer token, sessions bound to credentials);
- `_gateway`: the open sessions, admission (evicting the idle longest when full) and draining;
  `_session`: one session; `_shared`: one server for every session (`--upstream shared`);
- `_client`: the relay's `Downstream` over one session's exchanges;
- `_options`: the command line's settings and each session's model; `_metrics`: Prometheus;
- `_serve`: uvicorn on a socket bound here, signals, the drain.

It needs the `gateway` extra (`pip install 'visiongate[gateway]'`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from ._metrics import GatewayMetrics
    from ._options import GatewayOptions
    from ._serve import bind, serve_gateway

_HOMES: dict[str, str] = {
    "GatewayMetrics": "._metrics",
    "GatewayOptions": "._options",
    "bind": "._serve",
    "serve_gateway": "._serve",
}

__all__ = ["GatewayMetrics", "GatewayOptions", "bind", "serve_gateway"]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
