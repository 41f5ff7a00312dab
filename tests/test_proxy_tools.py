"""What the proxy learns from `tools/list` and what it lists (issue 23): output schemas from
every page, the proxy's own tool on the last page only, and the proxy's own listing when a
tool is called first, whose answer never reaches the client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from _cli_helpers import run
from _proxy_helpers import RawClient, filesystem_command
from _proxy_helpers import warm_proxy_argv as proxy_argv

from visiongate.adapters.proxy._jsonrpc import id_key
from visiongate.adapters.proxy._own import OwnRequests
from visiongate.adapters.proxy._tools import ToolListing
from visiongate.adapters.proxy._view import VIEW_TOOL

PINNED = {"type": "object", "properties": {"data": {"type": "string", "pattern": "^[A-Z]+$"}}}


def page(names: list[str], cursor: str | None = None) -> dict[str, Any]:
    tools = [{"name": n, "inputSchema": {}, "outputSchema": PINNED} for n in names]
    return {"tools": tools, **({"nextCursor": cursor} if cursor else {})}


def test_every_page_teaches_schemas_and_only_the_last_lists_the_proxys_tool() -> None:
    listing = ToolListing(offer_view=True)
    first = listing.listed(page(["a", "b"], cursor="2"))
    last = listing.listed(page(["c"]))
    assert [tool["name"] for tool in first["tools"]] == ["a", "b"]
    assert [tool["name"] for tool in last["tools"]] == ["c", VIEW_TOOL]
    for name in ("a", "b", "c"):
        relaxed = listing.schema(name)
        assert relaxed is not None and relaxed.changes == ("/properties/data: pattern",)
    assert "pattern" not in first["tools"][0]["outputSchema"]["properties"]["data"]
    plain = {"tools": [{"name": "d", "inputSchema": {}}]}
    assert ToolListing(offer_view=False).listed(plain) is plain  # nothing to change


def test_a_server_tool_of_the_same_name_wins() -> None:
    listing = ToolListing(offer_view=True)
    served = listing.listed({"tools": [{"name": VIEW_TOOL, "inputSchema": {}}]})
    assert [tool["name"] for tool in served["tools"]] == [VIEW_TOOL]
    assert not listing.is_local({"name": VIEW_TOOL})


def test_the_proxys_own_requests_end_however_the_server_does() -> None:
    async def run() -> tuple[Any, Any, Any]:
        sent: list[Mapping[str, Any]] = []

        async def send(data: bytes) -> None:
            sent.append(json.loads(data))

        own = OwnRequests(send, timeout=0.2)
        answered = asyncio.ensure_future(own.request("tools/list", {}))
        await asyncio.sleep(0)
        request_id = sent[0]["id"]
        assert request_id.startswith("visiongate-proxy:") and not own.deliver(id_key(7), {})
        assert own.deliver(id_key(request_id), {"result": {"tools": []}})
        gone = asyncio.ensure_future(own.request("tools/list", {}))
        await asyncio.sleep(0)
        own.close()
        late = await own.request("tools/list", {})  # never answered: its deadline passes
        return await answered, await gone, late

    assert asyncio.run(run()) == ({"tools": []}, None, None)


@pytest.mark.anyio
async def test_a_call_before_any_listing_still_gets_its_schema(tmp_path: Path) -> None:
    """The SDK's client lists tools only after a call; the proxy lists them itself first, so
    the text is not doubled and the structured content is kept, and the client sees nothing
    of the proxy's own request."""
    (tmp_path / "notes.txt").write_text("one line\n")
    client = await RawClient.start(proxy_argv(filesystem_command(tmp_path)), tmp_path)
    try:
        await client.initialize()
        answer = await client.request(
            "tools/call",
            {"name": "read_text_file", "arguments": {"path": str(tmp_path / "notes.txt")}},
        )
    finally:
        await client.close()
    result = answer["result"]
    assert result["content"][0]["text"] == "one line\n"
    assert result["structuredContent"] == {"content": "one line\n"}
    assert not any(b"visiongate-proxy:" in line for line in client.lines)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_print_config_keeps_no_image_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "proxy", "--print-config", "json", "--provider", "anthropic",
        "--model", "claude-sonnet-4-5", "--no-image-tool", "--", "npx", "some-server",
    )  # fmt: skip
    assert code == 0
    assert "--no-image-tool" in json.loads(out)["mcpServers"]["some-server"]["args"]


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_images_are_fitted_harder_when_the_first_fit_leaves_no_room(tmp_path: Path) -> None:
    """An image and 600 KB of audio (which passes as it came) under a 1 MB cap: the first
    estimate leaves the image half the cap, the answer does not fit, and the result is routed
    again with a smaller image budget instead of being refused or losing a block."""
    import base64
    import io

    from PIL import Image

    from visiongate.adapters import Router
    from visiongate.adapters.proxy._calls import Call, CallRouter, ProxyTarget
    from visiongate.engine import Gate

    records: list[dict[str, Any]] = []
    router = Router(Gate.load(trace=records.append), cache=tmp_path / "images")
    calls = CallRouter(router, ProxyTarget("anthropic", "claude-sonnet-4-5", 1_000_000), "t", "x")
    buffer = io.BytesIO()
    Image.effect_noise((2400, 1600), 80).convert("RGB").save(buffer, "PNG")
    audio = base64.b64encode(b"RIFF" + bytes(600_000)).decode("ascii")
    image = base64.b64encode(buffer.getvalue()).decode("ascii")
    result = {
        "content": [
            {"type": "image", "data": image, "mimeType": "image/png"},
            {"type": "audio", "data": audio, "mimeType": "audio/wav"},
        ]
    }
    body = {"jsonrpc": "2.0", "id": 1, "result": result}
    raw = json.dumps(body)
    message = asyncio.run(calls.answer(Call(1, "shot"), body, len(raw)))
    assert len(message) <= 1_000_000
    sent = json.loads(message)["result"]["content"]
    assert [block["type"] for block in sent] == ["text", "image", "audio"]
    assert sent[2]["data"] == audio
    (record,) = records
    tried = record["proxy"]["image_budgets_tried"]
    assert len(tried) >= 2 and tried[-1] < tried[0]


def test_a_result_the_listed_schema_rejects_is_never_sent(tmp_path: Path) -> None:
    """The client gets an error saying whose structured content broke the schema: the
    server's own, or the routed copy (here: the server's `MEDIA:` line, marked)."""
    from visiongate.adapters import Router
    from visiongate.adapters.proxy._calls import Call, CallRouter, ProxyTarget
    from visiongate.engine import Gate

    records: list[dict[str, Any]] = []
    router = Router(Gate.load(trace=records.append), cache=tmp_path / "images")
    calls = CallRouter(router, ProxyTarget("deepseek", "deepseek-chat", 1_000_000), "t", "x")
    schema = {
        "type": "object",
        "required": ["temp"],
        "properties": {"temp": {"type": "number"}, "see": {"type": "string", "pattern": "^MEDIA:"}},
    }
    calls.listed_tools({"tools": [{"name": "t", "inputSchema": {}, "outputSchema": schema}]})

    def answer(structured: dict[str, Any]) -> str:
        result = {"content": [{"type": "text", "text": "x"}], "structuredContent": structured}
        body = {"jsonrpc": "2.0", "id": 1, "result": result}
        sent = json.loads(asyncio.run(calls.answer(Call(1, "t"), body, 100)))
        message: str = sent["error"]["message"]
        return message

    own = answer({"temp": "warm"})
    assert "the MCP server's own structured content does not satisfy" in own
    assert "a string where the schema wants `number`" in own and "warm" not in own
    routed = answer({"temp": 14, "see": "MEDIA:/etc/passwd"})
    assert "the routed structured content does not satisfy" in routed
    assert [r["execution"]["outcome"] for r in records] == ["schema_mismatch"] * 2
