"""`visiongate proxy --url`: the example server over Streamable HTTP on loopback (the SDK's own
HTTP server under uvicorn), the client on the proxy's stdio (issue 19)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from _proxy_helpers import VISION, proxied, read_trace
from mcp.types import ImageContent, TextContent

from visiongate.adapters.mcp.example_server import build_server

pytestmark = pytest.mark.anyio
TAG_RANGE = range(0xE0000, 0xE0080)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Headers:
    """ASGI middleware that keeps the headers of every request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, Headers]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = Headers(build_server().streamable_http_app())
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp", app
    server.should_exit = True
    thread.join(timeout=10)


async def test_a_streamable_http_server_behind_the_proxy(
    http_server: tuple[str, Headers], tmp_path: Path
) -> None:
    url, headers = http_server
    trace = tmp_path / "trace.jsonl"
    argv = [
        sys.executable, "-m", "visiongate", "proxy", *VISION,
        "--url", url, "--header", "X-Test-Key: abc", "--trace", str(trace),
    ]  # fmt: skip
    async with proxied(argv, tmp_path) as session:
        tools = await session.list_tools()
        assert "screenshot" in {tool.name for tool in tools.tools}
        shot = await session.call_tool("screenshot", {})
        tagged = await session.call_tool("tagged", {})
    assert [type(block) for block in shot.content] == [TextContent, ImageContent]
    assert not any(
        ord(c) in TAG_RANGE for b in tagged.content if isinstance(b, TextContent) for c in b.text
    )
    assert any(seen.get("x-test-key") == "abc" for seen in headers.seen)
    records = read_trace(trace)
    assert [r["proxy"]["transport"] for r in records] == ["http", "http"]
    assert records[0]["proxy"]["server"] == url
