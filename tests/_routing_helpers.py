"""Real parts shared by the adapter tests: a loopback vision endpoint and routers over it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from visiongate.adapters._router import Router
from visiongate.adapters.vision import OpenAICompatibleBackend, VisionBackend
from visiongate.engine import Gate

DESCRIPTION = "A build dashboard: a sidebar of projects and three panes of log lines."
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


@dataclass
class VisionEndpoint:
    """An OpenAI-compatible chat-completions server on loopback that describes any image."""

    port: int = 0
    questions: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def record(self, body: dict[str, Any]) -> None:
        texts = [
            part.get("text", "")
            for message in body.get("messages", [])
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "text"
        ]
        with self.lock:
            self.questions.append("\n".join(texts))


def _handler(endpoint: VisionEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            endpoint.record(json.loads(self.rfile.read(length) or b"{}"))
            body = {
                "choices": [{"index": 0, "message": {"role": "assistant", "content": DESCRIPTION}}]
            }
            data = json.dumps(body).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: requests are recorded on the endpoint."""

    return Handler


@contextmanager
def without_proxies() -> Iterator[pytest.MonkeyPatch]:
    """A MonkeyPatch with the proxy variables unset, so loopback servers are reached."""
    with pytest.MonkeyPatch.context() as patch:
        for name in PROXY_VARIABLES:
            patch.delenv(name, raising=False)
        yield patch


@contextmanager
def loopback_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve `handler` on a free loopback port from a daemon thread; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def vision_endpoint() -> Iterator[VisionEndpoint]:
    endpoint = VisionEndpoint()
    with loopback_server(_handler(endpoint)) as port:
        endpoint.port = port
        yield endpoint


def aux_config(base_url: str, **agent: Any) -> dict[str, Any]:
    """An agent config whose auxiliary vision backend is the endpoint at `base_url`."""
    vision = {"base_url": base_url, "model": "test/vision", "timeout": 5, "max_retries": 0}
    return {"agent": dict(agent), "auxiliary": {"vision": vision}}


UNREACHABLE = "http://127.0.0.1:9/v1"
"""The discard port: nothing listens there, so the connection is refused at once."""


def make_router(
    cache: Path,
    config: dict[str, Any] | None = None,
    policy: str | None = None,
    trace: Any = None,
    vision: VisionBackend | None = None,
) -> Router:
    return Router(Gate.load(policy, config or {}, trace=trace), cache=cache, vision=vision)


def endpoint_backend(endpoint: VisionEndpoint) -> VisionBackend:
    """The endpoint as a backend given to the router directly (the `aux` fact stays unset)."""
    return OpenAICompatibleBackend("custom", "test/vision", endpoint.base_url, None, 5.0, 0)
