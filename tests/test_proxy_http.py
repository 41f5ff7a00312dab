"""`visiongate proxy --url`: the hostile test server (the example server and its attacks)
over Streamable HTTP on loopback (the SDK's own HTTP server under uvicorn), the client on the
proxy's stdio (issue 19)."""

from __future__ import annotations

import asyncio
import base64
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import (
    VISION,
    RawClient,
    SeenHeaders,
    example_over_http,
    free_port,
    proxied,
    read_trace,
    served_over_http,
    wait_for_port,
)
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

from visiongate.adapters.proxy._jsonrpc import UPSTREAM_CLOSED
from visiongate.adapters.proxy.relay import UPSTREAM_GONE

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


def _big_image_server() -> Any:
    """A server whose one tool answers a 3 MB PNG, over 1 MiB as an SSE event: the SDK
    client's default limit for one event, which failed every full-page screenshot."""
    from mcp.server.mcpserver import MCPServer

    noise = Image.effect_noise((1000, 1000), 90).convert("RGB")
    buffer = io.BytesIO()
    noise.save(buffer, "PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    server = MCPServer("big-images")

    @server.tool()
    def big() -> CallToolResult:
        image = ImageContent(type="image", data=data, mime_type="image/png")
        return CallToolResult(content=[image])

    return server


async def test_a_result_over_a_mebibyte_arrives_over_http(tmp_path: Path) -> None:
    with served_over_http(_big_image_server().streamable_http_app()) as url:
        argv = [sys.executable, "-m", "visiongate", "proxy", *VISION, "--url", url]
        async with proxied(argv, tmp_path) as session:
            result = await session.call_tool("big", {})
    assert not result.is_error, result
    (image,) = [block for block in result.content if isinstance(block, ImageContent)]
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size[0] > 0
    assert "exceeded" not in (tmp_path / "proxy.log").read_text()


async def _refusing(scope: Any, receive: Any, send: Any) -> None:
    """A server that refuses every request as Playwright's MCP server refuses a foreign Host."""
    if scope["type"] != "http":
        return
    body = b"Access is only allowed at localhost:8931"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 403, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def test_an_http_refusal_is_named_with_its_status_and_words(tmp_path: Path) -> None:
    with served_over_http(_refusing) as url:
        argv = [sys.executable, "-m", "visiongate", "proxy", *VISION, "--url", url]
        client = await RawClient.start(argv, tmp_path)
        answer = await client.initialize()
        await client.close()
    said = "HTTP 403 to POST: Access is only allowed at localhost:8931"
    assert said in answer["error"]["message"], answer  # the SDK alone: "Server returned an error"
    log = (tmp_path / "proxy.log").read_text()
    assert f"the MCP server `{url}` answered {said}" in log and "Traceback" not in log
