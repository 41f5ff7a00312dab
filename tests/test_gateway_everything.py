"""The gateway in front of the reference server `@modelcontextprotocol/server-everything`
(pinned in tests/npm), over stdio (a process per session) and over its own Streamable HTTP
(`--url`, a session per session), through the official SDK's Streamable HTTP client (issue
30): two concurrent sessions with different models get the lanes the gate gives each, the
listing is the stdio proxy's, and the server's requests and notifications (sampling,
elicitation, progress) reach the session whose call caused them, and no other."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _gateway_helpers import TEXT_MODEL, VISION_MODEL, GatewayProcess, connected, gateway_argv
from _gateway_helpers import running as gateway_running
from _proxy_helpers import (
    EVERYTHING,
    everything_command,
    free_port,
    proxied,
    proxy_argv,
    read_trace,
    wait_for_port,
)
from mcp.types import CallToolResult, CreateMessageResult, ElicitResult, TextContent

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Client:
    """One client's answers to the server's requests, named so they cannot be confused."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.progress: list[float] = []
        self.asked: list[str] = []

    async def sample(self, context: Any, params: Any) -> CreateMessageResult:
        self.asked.append("sampling")
        text = f"sampled-by-{self.name}"
        content = TextContent(type="text", text=text)
        return CreateMessageResult(role="assistant", content=content, model="test-model")

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append("elicitation")
        return ElicitResult(action="accept", content={"name": self.name})

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)

    def callbacks(self) -> dict[str, Any]:
        return {"sampling_callback": self.sample, "elicitation_callback": self.elicit}


@pytest.fixture(scope="module")
def everything_over_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """server-everything serving Streamable HTTP itself (`streamableHttp`, `$PORT`)."""
    everything_command()  # installs the pinned server when npm is here
    port = free_port()
    log = tmp_path_factory.mktemp("everything-http") / "server.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [str(EVERYTHING), "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdout=sink,
            stderr=sink,
        )
    try:
        assert wait_for_port(port), log.read_text()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module", params=["stdio", "shared", "url"])
def gateway(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayProcess]:
    home = tmp_path_factory.mktemp(f"gateway-everything-{request.param}")
    options = ["--listen", "127.0.0.1:0", "--trace", str(home / "trace.jsonl")]
    if request.param in ("stdio", "shared"):
        upstream = ["--upstream", "shared"] if request.param == "shared" else []
        argv = gateway_argv([*options, *upstream], everything_command())
    else:
        url = request.getfixturevalue("everything_over_http")
        argv = gateway_argv([*options, "--url", url])
    with gateway_running(argv, home) as started:
        yield started


def _text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


async def _a_session(gateway: GatewayProcess, client: Client, model: dict[str, str]) -> Any:
    async with connected(gateway.url, model, **client.callbacks()) as session:
        image = await session.call_tool("get-tiny-image", {})
        sampled = await session.call_tool("trigger-sampling-request", {"prompt": "hi"})
        elicited = await session.call_tool("trigger-elicitation-request", {})
        long = await session.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 2},
            progress_callback=client.on_progress,
        )
        return image, sampled, elicited, long


async def test_two_sessions_get_their_lanes_and_their_own_server_requests(
    gateway: GatewayProcess, request: pytest.FixtureRequest
) -> None:
    alice, bob = Client("alice"), Client("bob")
    sessions = (
        _a_session(gateway, alice, VISION_MODEL),
        _a_session(gateway, bob, TEXT_MODEL),
    )
    if request.node.callspec.params["gateway"] == "shared":
        # One server for both: its sampling and elicitation requests name no call on stdio, so
        # they reach a session only while it alone has calls open (README, `--upstream`).
        first = await sessions[0]
        results = (first, await sessions[1])
    else:
        results = tuple(await asyncio.gather(*sessions))
    (
        (a_image, a_sampled, a_elicited, a_long),
        (b_image, b_sampled, b_elicited, b_long),
    ) = results
    assert [b.type for b in a_image.content] == ["text", "image"]
    assert [b.type for b in b_image.content] == ["text"]
    assert "sampled-by-alice" in _text(a_sampled) and "bob" not in _text(a_sampled)
    assert "sampled-by-bob" in _text(b_sampled) and "alice" not in _text(b_sampled)
    assert "alice" in _text(a_elicited) and "bob" in _text(b_elicited)
    assert alice.asked == bob.asked == ["sampling", "elicitation"]
    assert alice.progress == bob.progress == [1, 2]
    assert not (a_long.is_error or b_long.is_error)
    home = gateway.home
    records = [
        r
        for r in read_trace(home / "trace.jsonl")
        if r["execution"]["tool_name"] == "get-tiny-image"
    ]
    lanes = {r["model"]: (r["lane"], r["proxy"]["session"]["id"]) for r in records}
    assert lanes["claude-sonnet-4-5"][0] == "native" and lanes["deepseek-chat"][0] == "text"
    assert lanes["claude-sonnet-4-5"][1] != lanes["deepseek-chat"][1]


async def test_the_listing_is_the_stdio_proxys(gateway: GatewayProcess, tmp_path: Path) -> None:
    callbacks = Client("listing").callbacks()
    async with connected(gateway.url, **callbacks) as session:
        through_gateway = await session.list_tools()
    async with proxied(proxy_argv(everything_command()), tmp_path, **callbacks) as direct:
        through_stdio = await direct.list_tools()
    assert through_gateway.model_dump() == through_stdio.model_dump()
