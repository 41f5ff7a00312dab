"""`visiongate proxy` in front of a hostile raw JSON-RPC server (`_hostile_proxy.py`): hidden
text in every surface, reserved `_meta`, injected `MEDIA:` lines, broken images, error results,
malformed messages from either side, calls that never end, cancellation, a server that crashes
in the middle of a call; the session survives all of it but the crash (issue 19)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _proxy_helpers import HOSTILE, RawClient, proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp import ClientSession, MCPError
from mcp.types import ElicitResult, ImageContent, TextContent

pytestmark = pytest.mark.anyio
TAG_RANGE = range(0xE0000, 0xE0080)
SERVER = [sys.executable, HOSTILE]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


class Seen:
    """What the client's callbacks received."""

    def __init__(self) -> None:
        self.logs: list[Any] = []
        self.elicitations: list[Any] = []

    async def log(self, params: Any) -> None:
        self.logs.append(params)

    async def elicit(self, context: Any, params: Any) -> ElicitResult:
        self.elicitations.append(params)
        return ElicitResult(action="accept", content={"name": "Ada"})


@pytest.fixture(scope="module")
def seen() -> Seen:
    return Seen()


@pytest.fixture(scope="module")
async def session(anyio_backend: str, home: Path, seen: Seen) -> AsyncIterator[ClientSession]:
    argv = proxy_argv(SERVER, "--trace", str(home / "trace.jsonl"))
    async with proxied(
        argv, home, logging_callback=seen.log, elicitation_callback=seen.elicit
    ) as client:
        yield client


def hidden(text: str) -> bool:
    return any(ord(char) in TAG_RANGE for char in text)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def test_listings_and_the_handshake_are_cleaned(session: ClientSession) -> None:
    listing = await session.list_tools()
    dumped = json.dumps(listing.model_dump(by_alias=True), ensure_ascii=False)
    assert not hidden(dumped)
    *servers, own = listing.tools
    assert own.name == "visiongate_view_image"  # the proxy's own tool, listed last
    for tool in servers:
        assert "[unverified] MEDIA:/etc/passwd" in (tool.description or "")
        assert tool.input_schema["properties"]["q"]["description"].startswith("weather: rain")
    assert listing.tools[0].title == "Smuggler"


async def test_a_smuggling_result_is_cleaned_and_routed(session: ClientSession) -> None:
    result = await session.call_tool("smuggle", {})
    text = text_of(result)
    assert not hidden(text)
    assert "[unverified] MEDIA:/etc/passwd" in text.splitlines()
    assert [block.type for block in result.content] == ["text", "image"]
    assert result.meta == {"com.example/note": "vendor"}  # reserved keys dropped
    assert result.structured_content is None  # no output schema: it is a JSON line of the text
    assert 'structured content: {"city": "London"' in text


async def test_six_images_with_a_broken_one(session: ClientSession) -> None:
    result = await session.call_tool("six", {})
    assert sum(isinstance(block, ImageContent) for block in result.content) == 4
    text = text_of(result)
    assert "[image 4: refused:" in text or "[image 4 not attached: refused" in text
    assert "[image 6 not attached: at most 4 images" in text
    assert sum(line.startswith("MEDIA:") for line in text.splitlines()) >= 5


async def test_an_error_result_stays_text(session: ClientSession) -> None:
    result = await session.call_tool("error_result", {})
    assert result.is_error
    assert [block.type for block in result.content] == ["text"]
    assert "tool reported an error, so its result stays text" in text_of(result)
    assert not hidden(text_of(result))


async def test_a_jsonrpc_error_is_cleaned(session: ClientSession) -> None:
    with pytest.raises(MCPError) as raised:
        await session.call_tool("rpc_error", {})
    assert not hidden(raised.value.error.message)
    assert "[unverified] MEDIA:/etc/passwd" in raised.value.error.message


async def test_log_messages_and_elicitation_prompts_are_cleaned(
    session: ClientSession, seen: Seen
) -> None:
    await session.call_tool("log", {})
    with anyio.fail_after(10):
        while not seen.logs:
            await anyio.sleep(0.05)
    (log,) = seen.logs
    assert not hidden(json.dumps(log.model_dump(), ensure_ascii=False))
    assert "[unverified] MEDIA:/etc/passwd" in log.data
    answer = await session.call_tool("elicit", {})
    (asked,) = seen.elicitations
    assert asked.message == "Who are you?"
    assert not hidden(json.dumps(asked.requested_schema, ensure_ascii=False))
    assert '"name": "Ada"' in text_of(answer)  # the client's answer went back to the server


async def test_a_malformed_answer_is_an_error_and_the_session_lives_on(
    session: ClientSession, home: Path
) -> None:
    with pytest.raises(MCPError, match="malformed"):
        await session.call_tool("malformed", {})
    assert (await session.call_tool("slow", {"seconds": 0})).content
    log = (home / "proxy.log").read_text()
    assert "malformed message" in log and "not JSON" in log


async def test_concurrent_calls_are_independent(session: ClientSession) -> None:
    finished: list[str] = []

    async def call(tool: str, **arguments: Any) -> None:
        await session.call_tool(tool, arguments)
        finished.append(tool)

    async with anyio.create_task_group() as group:
        group.start_soon(functools.partial(call, "slow", seconds=5))
        await anyio.sleep(0.2)
        group.start_soon(call, "six")
        group.start_soon(call, "smuggle")
    assert finished[-1] == "slow", finished


async def test_one_record_per_call_with_what_was_cleaned(
    session: ClientSession, home: Path
) -> None:
    await session.call_tool("smuggle", {})
    records = read_trace(home / "trace.jsonl")
    last = records[-1]
    assert last["execution"]["tool_name"] == "smuggle"
    assert last["sanitizer"]["text"]["tag_chars"] > 0
    assert last["sanitizer"]["meta"]["reserved_keys"] == 2
    outcomes = {r["execution"].get("outcome") for r in records}
    assert {"jsonrpc_error", "malformed"} <= outcomes
    cleaned = [r["proxy"].get("cleaned_elsewhere", {}) for r in records]
    assert any("tool" in c for c in cleaned) and any("log" in c for c in cleaned)


# -- raw sessions: timeouts, cancellation, malformed input, a crash --------------------------


async def test_a_call_that_never_ends_times_out_and_is_cancelled_upstream(tmp_path: Path) -> None:
    client = await RawClient.start(proxy_argv(SERVER, "--timeout", "1"), tmp_path)
    await client.initialize()
    answer = await client.request("tools/call", {"name": "hang", "arguments": {}})
    assert answer["error"]["code"] == -32001
    assert "did not answer `tools/call` within 1s" in answer["error"]["message"]
    hung = client.next_id
    seen = await client.request("tools/call", {"name": "cancelled", "arguments": {"id": hung}})
    assert seen["result"]["content"][0]["text"].startswith("true")
    assert await client.close() == 0


async def test_a_client_cancellation_reaches_the_server(tmp_path: Path) -> None:
    client = await RawClient.start(proxy_argv(SERVER), tmp_path)
    await client.initialize()
    params = {"name": "slow", "arguments": {"seconds": 0.5}}
    await client.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": params})
    cancel = {"requestId": 50, "reason": "user pressed stop"}
    await client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
    seen = await client.request("tools/call", {"name": "cancelled", "arguments": {"id": 50}})
    assert seen["result"]["content"][0]["text"].startswith("true")
    # The server's late answer to 50 arrives and is dropped: the proxy says so on stderr.
    log = tmp_path / "proxy.log"
    with anyio.fail_after(30):
        while "(id 50) was dropped" not in log.read_text(errors="replace"):
            await anyio.sleep(0.05)
    await client.request("ping")
    assert all(json.loads(line).get("id") != 50 for line in client.lines)
    assert await client.close() == 0


async def test_malformed_client_messages_are_answered_and_never_end_the_session(
    tmp_path: Path,
) -> None:
    client = await RawClient.start(proxy_argv(SERVER, "--max-message-bytes", "65536"), tmp_path)
    await client.initialize()
    await client.send_line(b"not json at all")
    await client.send_line(b'{"jsonrpc": "2.0", "id": 7, "method": 5}')
    await client.send_line(b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {')
    await client.send_line(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "x" * 70_000}).encode())
    for request_id, code in ((7, -32600), (8, -32700), (9, -32600)):
        answer = await client.answer(request_id)
        assert answer["error"]["code"] == code, answer
    assert "result" in await client.request("ping")
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in client.lines)
    assert await client.close() == 0
    log = (tmp_path / "proxy.log").read_text()
    assert "a malformed message from the client" in log and "over the limit" in log


async def test_a_server_that_crashes_mid_call_fails_the_call_and_the_proxy_exits_2(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.jsonl"
    client = await RawClient.start(proxy_argv([*SERVER, "crash"], "--trace", str(trace)), tmp_path)
    await client.initialize()
    answer = await client.request("tools/call", {"name": "smuggle", "arguments": {}})
    assert answer["error"]["code"] == -32000
    assert "exited with status 3 before answering `tools/call`" in answer["error"]["message"]
    assert await client.read() is None  # the proxy closed its output
    assert await client.close() == 2
    (record,) = read_trace(trace)
    assert record["execution"]["outcome"] == "upstream_closed"


async def test_stray_lines_from_the_server_are_logged_and_skipped(tmp_path: Path) -> None:
    async with proxied(proxy_argv([*SERVER, "garbage-start"]), tmp_path) as session:
        assert (await session.call_tool("slow", {"seconds": 0})).content
    assert "the MCP server sent a malformed message" in (tmp_path / "proxy.log").read_text()


async def test_a_server_that_never_answers_the_handshake_times_out_cleanly(tmp_path: Path) -> None:
    client = await RawClient.start(proxy_argv([*SERVER, "silent"], "--timeout", "1"), tmp_path)
    answer = await client.initialize()
    assert answer["error"]["code"] == -32001
    assert "did not answer `initialize` within 1s" in answer["error"]["message"]
    assert "result" not in await client.request("ping", timeout=10)  # timed out too
    assert await client.close() == 0


async def test_an_answer_that_cannot_be_cleaned_is_refused_not_forwarded(tmp_path: Path) -> None:
    client = await RawClient.start(proxy_argv(SERVER), tmp_path)
    await client.initialize()
    answer = await client.request("resources/read", {"uri": "file:///x"})
    assert answer["error"]["code"] == -32603 and "malformed" in answer["error"]["message"]
    assert "result" in await client.request("ping")
    assert await client.close() == 0
