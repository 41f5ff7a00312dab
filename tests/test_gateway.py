"""`visiongate proxy --listen`: the gateway in front of the example server (a process per
session), through the official SDK's Streamable HTTP client and raw HTTP (issue 30): a model
per session, records per session, sessions and their servers, the limits, the operations
endpoints."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _gateway_helpers import (
    ACCEPT,
    INITIALIZE,
    TEXT_MODEL,
    VISION_MODEL,
    GatewayProcess,
    children,
    connected,
    gateway_argv,
    module_gateway,
    raw_initialize,
    running,
    sse_messages,
    wait_until,
)
from _proxy_helpers import proxied, proxy_argv, read_trace
from _warm import server_command
from mcp.types import ImageContent, TextContent

pytestmark = pytest.mark.anyio
SERVER = "example_server"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


gateway = module_gateway("gateway", ["--listen", "127.0.0.1:0"], server_command())


def _records(home: Path, model: str, tool: str) -> list[dict[str, Any]]:
    return [
        r
        for r in read_trace(home / "trace.jsonl")
        if r["model"] == model and r["execution"].get("tool_name") == tool
    ]


async def test_two_sessions_with_different_models_get_different_lanes_for_the_same_tool(
    gateway: GatewayProcess,
) -> None:
    home = gateway.home

    async def screenshot(headers: dict[str, str]) -> Any:
        async with connected(gateway.url, headers) as session:
            return await session.call_tool("screenshot", {})

    vision, text = await asyncio.gather(screenshot(VISION_MODEL), screenshot(TEXT_MODEL))
    assert [type(b) for b in vision.content] == [TextContent, ImageContent]
    assert [type(b) for b in text.content] == [TextContent]
    assert "MEDIA:" in text.content[0].text
    (native,) = _records(home, "claude-sonnet-4-5", "screenshot")
    (texted,) = _records(home, "deepseek-chat", "screenshot")
    assert (native["lane"], texted["lane"]) == ("native", "text")
    sessions = [native["proxy"]["session"], texted["proxy"]["session"]]
    assert sessions[0]["id"] != sessions[1]["id"]
    assert all(re.fullmatch(r"[0-9a-f]{32}", s["id"]) for s in sessions)
    assert all(s["client"] == {"name": "mcp", "version": "0.1.0"} for s in sessions)
    assert [s["target_from"] for s in sessions] == ["header", "header"]
    assert native["proxy"]["transport"] == "stdio"


async def test_the_listing_is_the_stdio_proxys(gateway: GatewayProcess) -> None:
    home = gateway.home
    async with connected(gateway.url) as session:
        through_gateway = await session.list_tools()
    async with proxied(proxy_argv(server_command()), home) as direct:
        through_stdio = await direct.list_tools()
    assert through_gateway.model_dump() == through_stdio.model_dump()
    assert through_gateway.tools[-1].name == "visiongate_view_image"


async def test_query_parameters_name_the_model_for_clients_without_headers(
    gateway: GatewayProcess,
) -> None:
    home = gateway.home
    url = f"{gateway.url}?provider=deepseek&model=deepseek-chat"
    async with connected(url) as session:
        result = await session.call_tool("tile", {"number": 3})
    assert [type(b) for b in result.content] == [TextContent]
    (record,) = _records(home, "deepseek-chat", "tile")
    assert record["lane"] == "text" and record["proxy"]["session"]["target_from"] == "query"


def test_a_model_named_by_halves_or_changed_mid_session_is_refused(gateway: GatewayProcess) -> None:
    with httpx2.Client(timeout=60) as client:
        half = {"X-Visiongate-Provider": "deepseek"}
        refused, no_id = raw_initialize(client, gateway.url, half)
        assert refused.status_code == 400 and no_id is None
        assert refused.json()["id"] == 1
        assert (
            "give both `X-Visiongate-Provider` and `X-Visiongate-Model`"
            in (refused.json()["error"]["message"])
        )
        opened, session_id = raw_initialize(client, gateway.url, TEXT_MODEL)
        assert opened.status_code == 200 and session_id
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        other = {**ACCEPT, **VISION_MODEL, "mcp-session-id": session_id}
        changed = client.post(gateway.url, json=listing, headers=other)
        assert changed.status_code == 400
        assert (
            "this session routes for deepseek/deepseek-chat" in changed.json()["error"]["message"]
        )
        same = client.post(gateway.url, json=listing, headers={**other, **TEXT_MODEL})
        assert same.status_code == 200 and "tools" in sse_messages(same.text)[-1]["result"]
        client.delete(gateway.url, headers={"mcp-session-id": session_id})


def test_each_session_has_its_own_server_and_delete_stops_it(gateway: GatewayProcess) -> None:
    pid = gateway.process.pid
    before = set(children(pid, SERVER))
    with httpx2.Client(timeout=60) as client:
        ids = [raw_initialize(client, gateway.url)[1] for _ in range(2)]
        assert all(ids) and ids[0] != ids[1]
        assert wait_until(lambda: len(set(children(pid, SERVER)) - before) == 2)
        started = set(children(pid, SERVER)) - before
        deleted = client.delete(gateway.url, headers={"mcp-session-id": str(ids[0])})
        assert deleted.status_code == 200
        assert wait_until(lambda: len(set(children(pid, SERVER)) & started) == 1)
        gone = client.post(
            gateway.url,
            json={"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
            headers={**ACCEPT, "mcp-session-id": str(ids[0])},
        )
        assert gone.status_code == 404
        assert "initialize a new session" in gone.json()["error"]["message"]
        client.delete(gateway.url, headers={"mcp-session-id": str(ids[1])})
    assert wait_until(lambda: not set(children(pid, SERVER)) & started)


def test_operations_endpoints_and_metrics(gateway: GatewayProcess) -> None:
    with httpx2.Client(timeout=30) as client:
        assert client.get(f"{gateway.base}/healthz").json() == {"status": "ok"}
        ready = client.get(f"{gateway.base}/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready"
        metrics = client.get(f"{gateway.base}/metrics")
        assert metrics.status_code == 200
        assert metrics.headers["content-type"].startswith("text/plain")
        text = metrics.text
        nowhere = client.get(f"{gateway.base}/elsewhere")
        assert nowhere.status_code == 404 and "the MCP endpoint is /mcp" in nowhere.text
    for name in (
        "visiongate_sessions ",
        "visiongate_sessions_started_total ",
        "visiongate_route_seconds_bucket",
        "visiongate_upstream_seconds_bucket",
        "visiongate_tool_result_bytes_total",
        "visiongate_client_message_bytes_total",
        "process_resident_memory_bytes",
    ):
        assert name in text, name
    # The earlier tests of this module made calls: they are counted.
    assert _metric(text, 'visiongate_decisions_total{lane="native",source="mcp"}') >= 1
    assert _metric(text, 'visiongate_decisions_total{lane="text",source="mcp"}') >= 1
    assert _metric(text, 'visiongate_images_total{outcome="attached"}') >= 1
    assert _metric(text, 'visiongate_images_total{outcome="withheld"}') >= 1
    assert _metric(text, 'visiongate_http_refused_total{reason="bad_request"}') >= 1
    assert _metric(text, 'visiongate_sessions_ended_total{reason="deleted"}') >= 1


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not exported:\n{text}")


def test_a_session_over_the_limit_is_refused_and_one_that_idles_out_ends(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--max-sessions", "1", "--idle-timeout", "1.5"],
        server_command(),
    )
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        first, session_id = raw_initialize(client, gateway.url)
        assert first.status_code == 200 and session_id
        second, none = raw_initialize(client, gateway.url)
        assert second.status_code == 503 and none is None
        assert second.headers["retry-after"] == "5"
        error = second.json()
        assert error["id"] == INITIALIZE["id"]
        assert "at its limit of 1 sessions (--max-sessions)" in error["error"]["message"]
        pid = gateway.process.pid
        assert wait_until(lambda: len(children(pid, SERVER)) == 1)
        # No request in flight, no GET stream open: it idles out, and its server with it.
        assert wait_until(lambda: not children(pid, SERVER), 15)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        gone = client.post(
            gateway.url, json=listing, headers={**ACCEPT, "mcp-session-id": session_id}
        )
        assert gone.status_code == 404
        again, other = raw_initialize(client, gateway.url)
        assert again.status_code == 200 and other not in (None, session_id)
        metrics = client.get(f"{gateway.base}/metrics").text
        assert _metric(metrics, 'visiongate_sessions_ended_total{reason="idle"}') == 1
        assert _metric(metrics, 'visiongate_http_refused_total{reason="max_sessions"}') == 1
    assert "ended (idle)" in gateway.text()


def test_unknown_paths_methods_and_requests_without_a_session(gateway: GatewayProcess) -> None:
    with httpx2.Client(timeout=30) as client:
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        without = client.post(gateway.url, json=listing, headers=ACCEPT)
        assert without.status_code == 400 and without.json()["id"] == 7
        assert "a session begins with an `initialize`" in without.json()["error"]["message"]
        stream = client.get(gateway.url, headers={"accept": "text/event-stream"})
        assert stream.status_code == 400
        put = client.put(gateway.url, json=listing, headers=ACCEPT)
        assert put.status_code == 405 and put.headers["allow"] == "GET, POST, DELETE"
        made_up = client.post(
            gateway.url, json=listing, headers={**ACCEPT, "mcp-session-id": "0" * 32}
        )
        assert made_up.status_code == 404
