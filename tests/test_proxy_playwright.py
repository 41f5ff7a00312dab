"""`visiongate proxy` in front of Microsoft's `@playwright/mcp` (pinned in tests/npm), the
browser tool coding agents use, driving Debian's Chromium against a page served on loopback.

Its `browser_take_screenshot` answers with Markdown (the file it saved, the Playwright code it
ran) and one PNG. A full-page screenshot of a long page is the tall capture the image stage
tiles: for a vision model every tile arrives with its rows and mapping, and the note says
which rows were not attached and where the whole image is; for a text-only model no pixels
and no base64 reach the client, only the `MEDIA:` path. Both through the official SDK client.
"""

from __future__ import annotations

import functools
import http.server
import itertools
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _browser import find_chromium
from _proxy_helpers import TEXT_ONLY, VISION, playwright_command, proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp.types import ImageContent, TextContent

pytestmark = pytest.mark.anyio
ROWS = 400
BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
TILE = re.compile(r"tile (\d) of (\d): rows (\d+)-(\d+) of the 1280x(\d+) original")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A long order page (400 rows of text) served over HTTP on loopback."""
    site = tmp_path_factory.mktemp("site")
    rows = "".join(f"<p>Row {i}: widget-{i * 7} qty {i % 9}</p>" for i in range(ROWS))
    (site / "index.html").write_text(
        f"<html><body style='font-family:sans-serif'><h1>Order 4821</h1>{rows}</body></html>"
    )
    handler = functools.partial(QuietHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """The test reads no access log."""


def _text(content: list[object]) -> str:
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


async def test_a_full_page_screenshot_arrives_as_tiles_for_a_vision_model(
    chromium: str, page: str, tmp_path: Path
) -> None:
    server = playwright_command(chromium, tmp_path / "playwright")
    trace = tmp_path / "trace.jsonl"
    async with proxied(proxy_argv(server, "--trace", str(trace), target=VISION), tmp_path) as s:
        listed = [tool.name for tool in (await s.list_tools()).tools]
        assert "browser_take_screenshot" in listed and listed[-1] == "visiongate_view_image"
        opened = await s.call_tool("browser_navigate", {"url": page})
        assert not opened.is_error, _text(opened.content)
        shot = await s.call_tool("browser_take_screenshot", {"fullPage": True})
    assert not shot.is_error
    images = [block for block in shot.content if isinstance(block, ImageContent)]
    note = _text(shot.content)
    tiles = [tuple(map(int, found)) for found in TILE.findall(note)]
    assert len(images) == len(tiles) >= 2, note
    assert [tile[0] for tile in tiles] == list(range(1, len(tiles) + 1))
    height = tiles[0][4]
    assert height > 10_000  # 400 rows: the page Chromium rendered, whole
    for (_, _, first, last, _), (_, _, following, _, _) in itertools.pairwise(tiles):
        assert first < following < last  # overlapping, in order, from the top
    assert tiles[0][2] == 0 and "MEDIA:" in note
    if tiles[-1][3] < height:  # what the slots could not hold is said, with where it is
        left = f"rows {tiles[-1][3]}-{height} of the 1280x{height} original are not attached"
        assert left in note
    assert "Screenshot of full page" in note  # the server's own words survive
    records = read_trace(trace)
    (record,) = [r for r in records if r["execution"]["tool_name"] == "browser_take_screenshot"]
    assert record["lane"] == "native"
    assert (
        len(record["execution"]["attached"]) == len(images) and record["execution"]["media_paths"]
    )


async def test_a_text_only_model_gets_the_path_and_no_pixels(
    chromium: str, page: str, tmp_path: Path
) -> None:
    server = playwright_command(chromium, tmp_path / "playwright")
    async with proxied(proxy_argv(server, target=TEXT_ONLY), tmp_path) as session:
        assert not (await session.call_tool("browser_navigate", {"url": page})).is_error
        shot = await session.call_tool("browser_take_screenshot", {"fullPage": True})
    assert not shot.is_error
    assert all(isinstance(block, TextContent) for block in shot.content)
    note = _text(shot.content)
    assert BASE64_RUN.search(note) is None
    (path,) = re.findall(r"MEDIA:(\S+\.png)", note)
    assert Path(path).read_bytes().startswith(b"\x89PNG")
    assert "kept out of the conversation (text lane)" in note
