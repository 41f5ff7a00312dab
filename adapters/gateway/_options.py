"""What `visiongate proxy --listen` was asked to do, and the model each session routes for.

A session's model comes from its `initialize` request: the headers `X-Visiongate-Provider` and
`X-Visiongate-Model`, else the query parameters `provider` and `model` of the endpoint's URL
(for clients that cannot set headers), else the gateway's own `--provider`/`--model`. The two
come together or not at all. Later requests of the session may repeat them; naming another
model there is refused, since the session's routing was fixed when it began.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from ..proxy._call import ProxyTarget
from ..proxy._serve import ProxyOptions

__all__ = [
    "DEFAULT_DRAIN_S",
    "DEFAULT_EVICT_IDLE_AFTER_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PATH",
    "DEFAULT_READ_TIMEOUT_S",
    "DEFAULT_SESSION_CONCURRENCY",
    "MODEL_HEADER",
    "PROVIDER_HEADER",
    "SDK_SSE_EVENT_BYTES",
    "UPSTREAM_MODES",
    "GatewayOptions",
    "SessionTarget",
    "UpstreamMode",
    "session_target",
]

DEFAULT_PATH: Final = "/mcp"
DEFAULT_MAX_SESSIONS: Final = 100
DEFAULT_IDLE_TIMEOUT_S: Final = 1800.0
"""The SDK's own default: a session with no request in flight (and no GET stream open) for
30 minutes ends, and its server with it."""
DEFAULT_SESSION_CONCURRENCY: Final = 16
DEFAULT_EVICT_IDLE_AFTER_S: Final = 60.0
DEFAULT_READ_TIMEOUT_S: Final = 30.0
"""How long a request's head, and then its body, may take to arrive (nginx gives each 60 s;
a client on loopback or a LAN sends an MCP message in milliseconds)."""
DEFAULT_DRAIN_S: Final = 30.0
DEFAULT_MAX_REQUEST_BYTES: Final = 4 * 1024 * 1024
"""The longest request body read from a client (the SDK's own default)."""
SDK_SSE_EVENT_BYTES: Final = 1024 * 1024
"""The largest SSE event the Python SDK's Streamable HTTP client reads (`max_sse_event_size`,
1 MiB), and so fastmcp's and pydantic-ai's: a larger answer fails there, whole."""
DEFAULT_MAX_RESULT_BYTES: Final = SDK_SSE_EVENT_BYTES - 16 * 1024
"""The largest message the gateway sends a client by default (`--max-result-bytes`): results
are fitted under the SDK client's 1 MiB per event, with room for the event's own lines and for
the transport's re-encoding of the message (the stdio proxy's 10 MB would fail them)."""
PROVIDER_HEADER: Final = "x-visiongate-provider"
MODEL_HEADER: Final = "x-visiongate-model"
_NAME: Final = re.compile(r"[\x21-\x7e]{1,200}")
"""A provider or model name as a client may give it: visible ASCII, at most 200 characters."""
_REPLICA: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,62}")
TargetSource = Literal["header", "query", "default"]
UpstreamMode = Literal["per-session", "shared"]
UPSTREAM_MODES: Final = ("per-session", "shared")


@dataclass(frozen=True)
class GatewayOptions:
    """The gateway: where it listens, who may use it, its limits; `proxy` is what every
    session's relay does (the server, timeouts, caps) and the default model."""

    proxy: ProxyOptions
    host: str = "127.0.0.1"
    port: int = 8080
    path: str = DEFAULT_PATH
    token: str | None = None
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    forward_headers: tuple[str, ...] = ()
    """Client headers passed to a `--url` server (lower case), and nothing else of theirs."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    evict_idle_after: float = DEFAULT_EVICT_IDLE_AFTER_S
    """Seconds a session must have been idle before a new one may take its place."""
    max_sessions_per_credential: int | None = None
    """Sessions open at once with one credential digest (`_security.owner_digest`); None: no
    cap but `max_sessions`."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S
    session_concurrency: int = DEFAULT_SESSION_CONCURRENCY
    drain_timeout: float = DEFAULT_DRAIN_S
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    read_timeout: float = DEFAULT_READ_TIMEOUT_S
    """Seconds for a request's head, and for its body, to arrive."""
    replica: str | None = None
    """This replica's name, the prefix of its session ids, for a load balancer's affinity."""
    upstream: UpstreamMode = "per-session"
    """`per-session`: a server process per session; `shared`: one for all (`_shared`)."""

    def __post_init__(self) -> None:
        if not self.path.startswith("/"):
            raise ValueError(f"`--path {self.path}`: the endpoint's path starts with `/`")
        if self.upstream == "shared" and not self.proxy.command:
            raise ValueError(
                "`--upstream shared` is for a server command: a `--url` server keeps a session "
                "of its own per client"
            )
        if self.replica is not None and not _REPLICA.fullmatch(self.replica):
            raise ValueError(
                f"`--replica-id {self.replica}`: use letters, digits and `-` (at most 63), "
                "starting with a letter or digit"
            )

    def __repr__(self) -> str:  # the token never shows, not even in a traceback
        return f"GatewayOptions(host={self.host!r}, port={self.port}, path={self.path!r}, ...)"


@dataclass(frozen=True)
class SessionTarget:
    """The model one session routes for, and where the gateway learned it."""

    provider: str
    model: str
    source: TargetSource

    def applied(self, options: ProxyOptions) -> ProxyOptions:
        target = replace(options.target, provider=self.provider, model=self.model)
        return replace(options, target=target)


def session_target(
    headers: Mapping[str, str], query: Mapping[str, str], default: ProxyTarget
) -> SessionTarget | str:
    """The model a request names (headers, else query parameters), else the default; the
    problem, as a sentence, when it names one badly."""
    for source, provider_key, model_key, given in (
        ("header", PROVIDER_HEADER, MODEL_HEADER, headers),
        ("query", "provider", "model", query),
    ):
        provider, model = given.get(provider_key), given.get(model_key)
        if provider is None and model is None:
            continue
        shown = "`X-Visiongate-Provider` and `X-Visiongate-Model`"
        names = shown if source == "header" else "the query parameters `provider` and `model`"
        if provider is None or model is None:
            return f"give both {names}, or neither (the gateway's default model applies)"
        if not (_NAME.fullmatch(provider) and _NAME.fullmatch(model)):
            return f"{names} take visible ASCII names of at most 200 characters"
        return SessionTarget(provider, model, source)  # type: ignore[arg-type]
    return SessionTarget(default.provider, default.model, "default")
