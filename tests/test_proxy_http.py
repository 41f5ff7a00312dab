"""`visiongate proxy --url`: the hostile test server (the example server and its attacks)
over Streamable HTTP on loopback (the SDK's own HTTP server under uvicorn), the client on the
proxy's stdio (issue 19)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _proxy_helpers import (
    VISION,
    RawClient,
    SeenHeaders,
    example_over_http,
    free_port,
    proxied,
    read_trace,
    wait_for_port,
)
from mcp.types import ImageContent, TextContent

from visiongate.adapters.proxy._jsonrpc import UPSTREAM_CLOSED
from visiongate.adapters.proxy._relay import UPSTREAM_GONE

pytestmark = pytest.mark.anyio
TAG_RANGE = range(0xE0000, 0xE0080)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, SeenHeaders]]:
    with example_over_http() as served:
        yield served


async def test_a_streamable_http_server_behind_the_proxy(
    http_server: tuple[str, SeenHeaders], tmp_path: Path
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


SERVE_OVER_HTTP = f"""
import sys, uvicorn
sys.path.insert(0, {str(Path(__file__).parent)!r})
from _hostile_mcp import build_server
app = build_server().streamable_http_app()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


async def test_an_http_server_that_goes_away_answers_what_is_in_flight_and_ends_the_proxy(
    tmp_path: Path,
) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-P", "-c", SERVE_OVER_HTTP, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        argv = [
            sys.executable, "-m", "visiongate", "proxy", *VISION,
            "--url", f"http://127.0.0.1:{port}/mcp",
        ]  # fmt: skip
        client = await RawClient.start(argv, tmp_path)
        await client.initialize()
        first = await client.request("tools/call", {"name": "tagged", "arguments": {}})
        assert "result" in first
        server.kill()
        server.wait(timeout=30)
        gone = await client.request("tools/call", {"name": "tagged", "arguments": {}})
        assert gone["error"]["code"] == UPSTREAM_CLOSED
        said = gone["error"]["message"]  # the transport's own reason, when it had one in time
        assert "before answering `tools/call`" in said
        assert "closed the connection" in said or "cannot be reached (" in said
        assert await asyncio.wait_for(client.process.wait(), 30) == UPSTREAM_GONE
    finally:
        server.kill()
        server.wait(timeout=30)
    log = (tmp_path / "proxy.log").read_text()
    assert "cannot be reached: All connection attempts failed" in log
    assert "Traceback" not in log


async def test_an_http_server_that_is_not_there_is_an_error_answer_not_a_traceback(
    tmp_path: Path,
) -> None:
    argv = [
        sys.executable, "-m", "visiongate", "proxy", *VISION,
        "--url", f"http://127.0.0.1:{free_port()}/mcp",
    ]  # fmt: skip
    client = await RawClient.start(argv, tmp_path)
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    answer = await client.request("initialize", params)
    assert answer["error"]["code"] == UPSTREAM_CLOSED
    assert await asyncio.wait_for(client.process.wait(), 30) == UPSTREAM_GONE
    assert "Traceback" not in (tmp_path / "proxy.log").read_text()
