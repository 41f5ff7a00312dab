"""Structured content through `visiongate proxy` when the output schema pins the image fields
(issue 23): `tests/_structured_server.py`, the official SDK's server, whose schemas put a
base64 `pattern`, `contentEncoding` and a `const` media type on a picture, and `format:
data-url` on a link. Routing replaces the base64 by a `MEDIA:` path (text lane) and may change
the format (native lane), so the proxy lists a schema with those constraints dropped, and the
SDK client's own validation accepts every result."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import TEXT_ONLY, VISION, proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp import ClientSession
from mcp.types import CallToolResult, ImageContent, TextContent

from visiongate.adapters.wire._inline import find_inline
from visiongate.adapters.wire._schemas import schema_problem

pytestmark = pytest.mark.anyio
SERVER = [sys.executable, str(Path(__file__).parent / "_structured_server.py")]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def argv(home: Path, target: list[str]) -> list[str]:
    return proxy_argv(SERVER, "--trace", str(home / "trace.jsonl"), target=target)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def listed(session: ClientSession) -> dict[str, Any]:
    return {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}


async def test_the_listing_drops_only_what_routing_would_break(tmp_path: Path) -> None:
    async with proxied(argv(tmp_path, VISION), tmp_path) as session:
        schemas = await listed(session)
    picture = schemas["snapshot"]["$defs"]["Picture"]["properties"]
    assert picture["data"]["type"] == "string" and "pattern" not in picture["data"]
    assert "contentEncoding" not in picture["data"] and "const" not in picture["mimeType"]
    assert "MEDIA: path" in picture["data"]["description"]
    assert "format" not in schemas["data_url"]["properties"]["url"]
    assert schemas["planted"]["properties"]["note"] == {"title": "Note", "type": "string"}
    assert "visiongate_view_image" in schemas and schemas["visiongate_view_image"] is None


async def test_text_lane_results_satisfy_the_listed_schema(tmp_path: Path) -> None:
    async with proxied(argv(tmp_path, TEXT_ONLY), tmp_path) as session:
        await session.list_tools()
        snapshot = await session.call_tool("snapshot", {})  # validated by the SDK client
        link = await session.call_tool("data_url", {})
    for result in (snapshot, link):
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert find_inline(wire) == [] and not result.is_error
    data = snapshot.structured_content["picture"]["data"]  # type: ignore[index]
    assert data.startswith("MEDIA:") and Path(data.removeprefix("MEDIA:")).is_file()
    # The SDK server also wrote the JSON into the text, base64 and all: the text holds the
    # same reference instead, then the MEDIA: line.
    first = json.loads(text_of(snapshot).split("\n")[0])
    assert first["picture"]["data"] == data and f"\n{data}\n" in text_of(snapshot)
    assert link.structured_content == {"url": text_of(link).split("\n")[1]}
    records = read_trace(tmp_path / "trace.jsonl")
    advertised = records[0]["proxy"]["output_schema"]
    assert advertised["advertised"] == "relaxed"
    assert advertised["relaxed"] == [
        "/$defs/Picture/properties/data: pattern, contentEncoding",
        "/$defs/Picture/properties/mimeType: const",
    ]


async def test_no_copy_a_model_may_read_carries_base64_in_the_vision_lane(
    tmp_path: Path,
) -> None:
    """Regression (issue 36): the vision lane's `structuredContent` carried the fitted image
    as base64 (240,000 characters), which a client with `use_structured_content=True` hands
    the model as text. The image is an image block; every JSON copy names its path."""
    async with proxied(argv(tmp_path, VISION), tmp_path) as session:
        await session.list_tools()
        snapshot = await session.call_tool("snapshot", {})
        link = await session.call_tool("data_url", {})
    (image,) = [block for block in snapshot.content if isinstance(block, ImageContent)]
    assert len(base64.b64decode(image.data)) < 600_000  # fitted, not the server's 4.8 MB PNG
    picture = snapshot.structured_content["picture"]  # type: ignore[index]
    assert picture["data"].startswith("MEDIA:"), picture
    (linked,) = [block for block in link.content if isinstance(block, ImageContent)]
    assert link.structured_content["url"].startswith("MEDIA:"), link.structured_content  # type: ignore[index]
    for result in (snapshot, link):
        assert not find_inline(result.structured_content)
        assert image.data[:200] not in json.dumps(result.structured_content)
        assert linked.data[:200] not in json.dumps(result.structured_content)
        assert not any(find_inline(block.text) for block in result.content if block.type == "text")


async def test_a_servers_media_line_is_marked_in_structured_content_too(tmp_path: Path) -> None:
    """Issue 23: `MEDIA:/etc/passwd` was marked in the text but not inside
    `structuredContent`, which is what some clients hand the model."""
    async with proxied(argv(tmp_path, TEXT_ONLY), tmp_path) as session:
        result = await session.call_tool("planted", {})
    assert result.structured_content == {"note": "[unverified] MEDIA:/etc/passwd"}
    (record,) = read_trace(tmp_path / "trace.jsonl")
    assert record["execution"]["unverified_media_lines"] == 1


def test_the_declared_schema_would_reject_what_routing_makes() -> None:
    """Why the listing is widened: the routed copies break the declared constraints."""
    declared = {
        "type": "object",
        "properties": {
            "data": {"type": "string", "pattern": "^[A-Za-z0-9+/]+={0,2}$"},
            "mimeType": {"type": "string", "const": "image/png"},
        },
    }
    problem = schema_problem(declared, {"data": "MEDIA:/cache/a.png", "mimeType": "image/png"})
    assert problem is not None and problem.startswith("at `/data`: ")
    assert schema_problem(declared, {"data": "iVBOR", "mimeType": "image/jpeg"}) is not None
