"""The proxy's own tool, `visiongate_view_image` (issue 23): the text lane's note said "call
vision_analyze with its MEDIA: path", a tool no server behind the proxy has. The proxy lists a
tool of its own that takes a `MEDIA:` path it showed the model in this session and returns the
image fitted (native lane) or described (text lane), and refuses any other path."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
from pathlib import Path

import pytest
from _image_samples import screenshot
from _proxy_helpers import TEXT_ONLY, VISION, filesystem_command, proxied, proxy_argv, read_trace
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image

pytestmark = pytest.mark.anyio
VIEW = "visiongate_view_image"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view")
    screenshot(1280, 800, 8).save(root / "screen.png")
    screenshot(640, 400, 9).save(root / "other.png")
    return root


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
    assert picture.size == (1280, 800) and not viewed.is_error


async def test_it_refuses_every_path_it_did_not_show(files: Path, tmp_path: Path) -> None:
    argv = proxy_argv(filesystem_command(files), target=TEXT_ONLY)
    async with proxied(argv, tmp_path) as session:
        shown = await session.call_tool("read_media_file", {"path": str(files / "screen.png")})
        path = Path(media_path(shown))
        cache = path.parent
        # Another image in the cache directory, as another session would have written it.
        other = cache / f"{'0' * 64}.png"
        shutil.copy(files / "other.png", other)
        link = cache / f"{'1' * 64}.png"
        link.symlink_to(files / "other.png")
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
