"""`visiongate proxy` in front of the reference server `@modelcontextprotocol/server-filesystem`
(pinned in tests/npm), the server most people read images from disk with (issue 23).

The proxy's own tool, `visiongate_view_image`, is tested here too: the text lane's note said
"call vision_analyze with its MEDIA: path", a tool no server behind the proxy has. The proxy
lists a tool of its own that takes a `MEDIA:` path it showed the model in this session and
returns the image fitted (native lane) or described (text lane), and refuses any other path.

Its tools declare an `outputSchema`, and `read_media_file` returns the image twice: as a content
block and again in `structuredContent`. SDK clients reject a result without the structured
content ("has an output schema but did not return structured content"), so every call here
goes through a real client's output-schema validation: the official SDK's `ClientSession` and
fastmcp's `Client` (the one pydantic-ai's `MCPToolset` runs on), for a vision model, a
text-only model and `--client claude-desktop` (1 MB per message).
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _image_samples import screenshot
from _proxy_helpers import (
    TEXT_ONLY,
    VISION,
    filesystem_command,
    proxied,
    proxy_env,
    read_trace,
)
from _proxy_helpers import (
    warm_proxy_argv as proxy_argv,
)
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

from visiongate.adapters.wire._inline import find_inline

if TYPE_CHECKING:
    from fastmcp import Client

pytestmark = pytest.mark.anyio

TARGETS: dict[str, tuple[list[str], list[str], int]] = {
    "vision": (VISION, [], 10_000_000),
    "text-only": (TEXT_ONLY, [], 10_000_000),
    "claude-desktop": (VISION, ["--client", "claude-desktop"], 1_000_000),
}
IMAGES = ("busy.png", "photo.jpg", "screen.png")
Read = Callable[[Path], Awaitable[dict[str, Any]]]
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
TEXT_BYTES = 2_700_000


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2560x1440 busy PNG (over 5 MB), a 4000x3000 JPEG, a small screenshot, a 2.7 MB text."""
    root = tmp_path_factory.mktemp("files")
    noise = Image.effect_noise((2560, 1440), 90).convert("RGB")
    busy = Image.blend(noise, screenshot(2560, 1440, 4).convert("RGB"), 0.35)
    busy.save(root / "busy.png")
    assert (root / "busy.png").stat().st_size > 5_000_000
    screenshot(4000, 3000, 5).convert("RGB").save(root / "photo.jpg", quality=92)
    screenshot(800, 500, 6).save(root / "screen.png")
    line = "a line of a long log file, with words in it\n"
    (root / "big.txt").write_text((line * (TEXT_BYTES // len(line) + 1))[:TEXT_BYTES])
    (root / "notes.txt").write_text("first line\nsecond line\n")
    return root


def wire_of(result: Any) -> dict[str, Any]:
    """A client's result as the wire JSON (camelCase)."""
    if hasattr(result, "model_dump"):
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped
    content = [block.model_dump(by_alias=True, mode="json") for block in result.content]
    return {"content": content, "structuredContent": result.structured_content}


def check_media_result(wire: dict[str, Any], lane: str, cap: int) -> None:
    """The assertions of the issue's "Done when", for one `read_media_file` result."""
    content = wire["content"]
    images = [block for block in content if block["type"] == "image"]
    texts = [block["text"] for block in content if block["type"] == "text"]
    structured = wire["structuredContent"]["content"]
    assert not any(BASE64_RUN.search(text) or find_inline(text) for text in texts)
    if lane == "text":
        assert images == [] and find_inline(wire) == []
        assert not BASE64_RUN.search(json.dumps(wire))
        path = re.search(r"^MEDIA:(\S+)$", texts[0], re.MULTILINE)
        assert path is not None and Path(path.group(1)).is_file()
        (copy,) = structured
        assert copy["type"] == "image" and copy["data"] == path.group(0)
        assert copy["mimeType"].startswith("image/")
        return
    (image,) = images
    picture = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    picture.load()
    assert max(picture.size) <= 2000 and len(image["data"]) < cap
    (copy,) = structured  # the pixels once, in the content; the copy names the file (issue 36)
    assert copy["type"] == "image" and copy["data"].startswith("MEDIA:"), copy
    assert copy["data"] in texts[0] and not BASE64_RUN.search(json.dumps(structured))
    assert "MEDIA:" in texts[0] and "[image 1 attached: " in texts[0]


@asynccontextmanager
async def fastmcp_client(argv: list[str], home: Path) -> AsyncIterator[Client[Any]]:
    # Imported here, not at collection: fastmcp (and what it pulls in) costs seconds.
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    transport = StdioTransport(
        argv[0], argv[1:], env=proxy_env(home), log_file=home / "proxy.log", keep_alive=False
    )
    async with Client(transport) as client:
        yield client


def check_trace(home: Path, cap: int, calls: int) -> None:
    records = [r for r in read_trace(home / "trace.jsonl") if r.get("proxy")]
    assert len(records) == calls
    assert all(r["proxy"]["bytes_to_client"] <= cap for r in records)
    assert all(r["execution"]["structured_content"]["valid"] for r in records)


def lane_of(target: str) -> str:
    return "text" if target == "text-only" else "native"


@asynccontextmanager
async def media_reader(kind: str, argv: list[str], home: Path) -> AsyncIterator[Read]:
    """`read_media_file` through the official SDK's `ClientSession` or fastmcp's `Client`,
    each validating the result against the tool's output schema, as the wire JSON."""
    if kind == "sdk":
        async with proxied(argv, home) as session:
            await session.list_tools()

            async def read_sdk(path: Path) -> dict[str, Any]:
                result = await session.call_tool("read_media_file", {"path": str(path)})
                assert not result.is_error, result.content
                return wire_of(result)

            yield read_sdk
        return
    async with fastmcp_client(argv, home) as client:

        async def read_fastmcp(path: Path) -> dict[str, Any]:
            result = await client.call_tool("read_media_file", {"path": str(path)})
            # `data` is the structured content parsed through the tool's output schema; a
            # result it rejects leaves it None (and logs the error).
            assert result.data is not None and not result.is_error
            return wire_of(result)

        yield read_fastmcp


@pytest.mark.parametrize("client", ["sdk", "fastmcp"])
@pytest.mark.parametrize("target", list(TARGETS))
async def test_read_media_file_through_real_clients(
    target: str, client: str, files: Path, tmp_path: Path
) -> None:
    model, options, cap = TARGETS[target]
    argv = proxy_argv(
        filesystem_command(files), *options, "--trace", str(tmp_path / "trace.jsonl"), target=model
    )
    async with media_reader(client, argv, tmp_path) as read:
        for name in IMAGES:
            check_media_result(await read(files / name), lane_of(target), cap)
    check_trace(tmp_path, cap, len(IMAGES))


@asynccontextmanager
async def direct(files: Path, home: Path) -> AsyncIterator[ClientSession]:
    command = filesystem_command(files)
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with (home / "server.log").open("a") as log:
        async with (
            stdio_client(parameters, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content if block.type == "text"]


async def test_text_tools_are_not_doubled(files: Path, tmp_path: Path) -> None:
    """Issue 23: a `structured content:` line was appended to the text of every output-schema
    tool (`read_text_file` 54 → 157 characters): the client gets what a direct connection
    gets, structured content included."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read_text_file", {"path": str(files / "notes.txt")}),
        ("list_directory", {"path": str(files)}),
    ]
    async with direct(files, tmp_path) as server:
        expected = [await server.call_tool(name, arguments) for name, arguments in calls]
    async with proxied(proxy_argv(filesystem_command(files)), tmp_path) as session:
        got = [await session.call_tool(name, arguments) for name, arguments in calls]
    for before, after in zip(expected, got, strict=True):
        assert texts(after) == texts(before)
        assert after.structured_content == before.structured_content


async def test_a_large_text_file_fits_claude_desktop(files: Path, tmp_path: Path) -> None:
    """Issue 23: a 2.7 MB `read_text_file` through `--client claude-desktop` lost its
    structured content and every SDK client rejected it. Both copies are cut, each to about
    half of the 1 MB, the schema still satisfied, and the note counts what was left out."""
    argv = proxy_argv(
        filesystem_command(files),
        "--client",
        "claude-desktop",
        "--trace",
        str(tmp_path / "trace.jsonl"),
    )
    async with proxied(argv, tmp_path) as session:
        await session.list_tools()
        result = await session.call_tool("read_text_file", {"path": str(files / "big.txt")})
    (text,) = texts(result)
    structured = result.structured_content
    assert structured is not None and text.startswith("a line of a long log file")
    assert structured["content"].startswith("a line of a long log file")
    assert 300_000 < len(text) < 500_000 and 300_000 < len(structured["content"]) < 500_000
    (record,) = read_trace(tmp_path / "trace.jsonl")
    fitted = record["proxy"]["fitted"]
    assert record["proxy"]["bytes_to_client"] <= 1_000_000
    assert f"{fitted['text_bytes_left_out']:,} bytes of its text were left out" in text
    assert f"{fitted['structured_bytes_left_out']:,} bytes of this value" in structured["content"]
    assert Path(fitted["text_path"]).read_text() == (files / "big.txt").read_text()


async def test_the_same_results_through_router_mcp(files: Path, tmp_path: Path) -> None:
    """For library users: `Router.mcp(..., output_schema=)` on the server's own results gives
    results the SDK's own validator accepts, with the same lanes as the proxy's."""
    from mcp.types import CallToolResult

    from visiongate.adapters import Router
    from visiongate.engine import Gate

    router = Router(Gate.load(), cache=tmp_path / "images")
    lanes = {
        "native": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
        "text": {"provider": "deepseek", "model": "deepseek-chat"},
    }
    async with direct(files, tmp_path) as server:
        tools = {tool.name: tool for tool in (await server.list_tools()).tools}
        schema = tools["read_media_file"].output_schema
        for name in IMAGES:
            raw = await server.call_tool("read_media_file", {"path": str(files / name)})
            for lane, target in lanes.items():
                budget = 1_000_000 - 2_000
                routed = await router.mcp(
                    raw, **target, output_schema=schema, image_budget=budget, trace=False
                )
                assert routed.lane == lane and routed.client.schema_problem is None
                result = CallToolResult.model_validate(routed.to_mcp())
                await server.validate_tool_result("read_media_file", result)
                check_media_result(wire_of(result), lane, 1_000_000)
        for tool, path in (("read_text_file", files / "notes.txt"), ("list_directory", files)):
            raw = await server.call_tool(tool, {"path": str(path)})
            routed = await router.mcp(
                raw, **lanes["text"], output_schema=tools[tool].output_schema, trace=False
            )
            assert routed.text == texts(raw)[0]
            assert routed.to_mcp()["structuredContent"] == raw.structured_content


# -- the proxy's own tool ------------------------------------------------------------------

VIEW = "visiongate_view_image"


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def media_path(result: CallToolResult) -> str:
    found = re.search(r"^MEDIA:(\S+)$", text_of(result), re.MULTILINE)
    assert found is not None, text_of(result)
    return found.group(1)


async def test_text_lane_names_the_tool_and_it_describes_the_image(
    files: Path, tmp_path: Path
) -> None:
    argv = proxy_argv(
        filesystem_command(files), "--trace", str(tmp_path / "trace.jsonl"), target=TEXT_ONLY
    )
    async with proxied(argv, tmp_path) as session:
        tools = [tool.name for tool in (await session.list_tools()).tools]
        assert tools[-1] == VIEW
        shown = await session.call_tool("read_media_file", {"path": str(files / "screen.png")})
        assert f"call {VIEW} with its MEDIA: path" in text_of(shown)
        assert "vision_analyze" not in text_of(shown)
        viewed = await session.call_tool(VIEW, {"path": f"MEDIA:{media_path(shown)}"})
    assert not viewed.is_error and not any(b.type == "image" for b in viewed.content)
    assert "[description of the image" in text_of(viewed)
    assert f"MEDIA:{media_path(shown)}" in text_of(viewed)
    record = read_trace(tmp_path / "trace.jsonl")[-1]
    assert record["proxy"]["local_tool"] == VIEW and record["lane"] == "text"
    assert record["execution"]["action"] == "describe"


async def test_native_lane_returns_the_image_fitted(files: Path, tmp_path: Path) -> None:
    argv = proxy_argv(filesystem_command(files), "--client", "claude-desktop", target=VISION)
    async with proxied(argv, tmp_path) as session:
        shown = await session.call_tool("read_media_file", {"path": str(files / "screen.png")})
        viewed = await session.call_tool(VIEW, {"path": media_path(shown), "question": "what?"})
    (image,) = [block for block in viewed.content if isinstance(block, ImageContent)]
    picture = Image.open(io.BytesIO(base64.b64decode(image.data)))
    assert picture.size == (800, 500) and not viewed.is_error


async def test_it_refuses_every_path_it_did_not_show(files: Path, tmp_path: Path) -> None:
    argv = proxy_argv(filesystem_command(files), target=TEXT_ONLY)
    async with proxied(argv, tmp_path) as session:
        shown = await session.call_tool("read_media_file", {"path": str(files / "screen.png")})
        path = Path(media_path(shown))
        cache = path.parent
        # Another image in the cache directory, as another session would have written it.
        other = cache / f"{'0' * 64}.png"
        shutil.copy(files / "photo.jpg", other)
        link = cache / f"{'1' * 64}.png"
        link.symlink_to(files / "notes.txt")
        asked = [
            "/etc/passwd",
            f"{cache}/../{cache.name}/{path.name}",
            str(other),
            str(link),
            f"{path} ",
            "",
        ]
        refused = [await session.call_tool(VIEW, {"path": p}) for p in asked[:-1]]
        # The shown path itself, swapped for a symlink to a copy of the same bytes.
        copy = tmp_path / "copy.png"
        shutil.copy(path, copy)
        os.replace(path, tmp_path / "moved.png")
        path.symlink_to(copy)
        swapped = await session.call_tool(VIEW, {"path": str(path)})
        missing = await session.call_tool(VIEW, {})
    for result in refused[:-1]:
        assert result.is_error and "is not an image this proxy showed you" in text_of(result)
    assert not refused[-1].is_error  # surrounding spaces are not part of a path
    assert swapped.is_error and "can no longer be read" in text_of(swapped)
    assert missing.is_error and "pass the MEDIA: path" in text_of(missing)


async def test_no_image_tool_lists_none_and_offers_none(files: Path, tmp_path: Path) -> None:
    argv = proxy_argv(filesystem_command(files), "--no-image-tool", target=TEXT_ONLY)
    async with proxied(argv, tmp_path) as session:
        tools = [tool.name for tool in (await session.list_tools()).tools]
        shown = await session.call_tool("read_media_file", {"path": str(files / "screen.png")})
    assert VIEW not in tools
    assert "[1 image(s) kept out of the conversation (text lane)]" in text_of(shown)
    assert "call " not in text_of(shown)


async def test_a_region_or_the_rows_from_an_offset_of_a_tall_page(tmp_path: Path) -> None:
    """Issue 34: asked for the rows its tiles left out, the tool re-sent the same tiles."""
    pages = tmp_path / "pages"
    pages.mkdir()
    page = Image.new("RGB", (1280, 12000), (255, 255, 255))
    for top in range(0, 12000, 40):
        page.paste((top % 251, 90, 200 - top % 199), (0, top, 1280, top + 20))
    page.save(pages / "page.png")
    argv = proxy_argv(filesystem_command(pages), target=VISION)
    async with proxied(argv, tmp_path) as session:
        shown = await session.call_tool("read_media_file", {"path": str(pages / "page.png")})
        path = media_path(shown)
        hint = re.search(rf"call {VIEW} with its MEDIA: path and `rows_from` (\d+)", text_of(shown))
        rows = await session.call_tool(VIEW, {"path": path, "rows_from": 4000})
        region = {"left": 100, "top": 5000, "width": 400, "height": 300}
        zoom = await session.call_tool(VIEW, {"path": path, "region": region})
        refused = [
            await session.call_tool(VIEW, {"path": path, "region": bad})
            for bad in (
                {"left": 1200, "top": 0, "width": 200, "height": 100},
                {"left": 0, "top": 0, "width": 0, "height": 100},
                {"left": 0, "top": 0, "width": 3, "height": 3},
            )
        ]
        past = await session.call_tool(VIEW, {"path": path, "rows_from": 12000})
        stranger = await session.call_tool(VIEW, {"path": "/tmp/x.png", "rows_from": 10})

    def sizes(result: CallToolResult) -> list[tuple[int, int]]:
        return [
            Image.open(io.BytesIO(base64.b64decode(block.data))).size
            for block in result.content
            if isinstance(block, ImageContent)
        ]

    assert hint is not None and 0 < int(hint.group(1)) < 12000  # the rows no tile shows
    assert sizes(rows) == [(1280, 1568)] and "top 4000" in text_of(rows)
    assert sizes(zoom) == [(400, 300)] and "top 5000" in text_of(zoom)
    messages = ["is not inside the 1280x12000", "positive width and height", "absurd zoom"]
    for result, message in zip(refused, messages, strict=True):
        assert result.is_error and message in text_of(result) and not sizes(result)
    assert past.is_error and "past the last row" in text_of(past)
    assert stranger.is_error and "is not an image this proxy showed you" in text_of(stranger)
