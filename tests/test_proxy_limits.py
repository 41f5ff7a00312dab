"""The client's message limit (`--max-result-bytes 1000000`, the desktop client's 1 MB): a 5K
screenshot, six screenshots in one result, a 30 MB text and a 5K embedded resource, each
through one session that must stay alive; no line the proxy writes is over the limit, the
images keep as much detail as the budget leaves them, and a cut text says where it all is."""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import HOSTILE, RawClient, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp.types import CallToolResult
from PIL import Image

pytestmark = pytest.mark.anyio
LIMIT = 1_000_000
PER_IMAGE = 262_144  # the default policy's embed_target_bytes


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("limits")


@pytest.fixture(scope="module")
async def client(anyio_backend: str, home: Path) -> AsyncIterator[RawClient]:
    options = ("--max-result-bytes", str(LIMIT), "--trace", str(home / "trace.jsonl"))
    raw = await RawClient.start(proxy_argv([sys.executable, HOSTILE], *options), home)
    await raw.initialize()
    yield raw
    assert await raw.close() == 0


async def call(client: RawClient, tool: str) -> CallToolResult:
    answer = await client.request("tools/call", {"name": tool, "arguments": {}}, timeout=300)
    # Valid MCP content, whatever happened on the way.
    result = CallToolResult.model_validate(answer["result"])
    assert max(len(line) for line in client.lines) < LIMIT
    return result


def pictures(result: CallToolResult) -> list[tuple[Image.Image, int]]:
    found = []
    for block in result.content:
        if block.type == "image":
            found.append((Image.open(io.BytesIO(base64.b64decode(block.data))), len(block.data)))
    return found


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert first.type == "text"
    return first.text


async def test_a_5k_screenshot_fits_under_the_limit(client: RawClient) -> None:
    result = await call(client, "screen5k")
    ((image, size),) = pictures(result)
    assert max(image.size) <= 1568 and size <= PER_IMAGE
    assert "downscaled from 5120x2880" in text(result)


async def test_six_screenshots_share_the_budget(client: RawClient, home: Path) -> None:
    result = await call(client, "screens6")
    found = pictures(result)
    assert len(found) == 4
    total = sum(size for _image, size in found)
    record = read_trace(home / "trace.jsonl")[-1]
    budget = record["proxy"]["image_budget"]
    share = budget // 4
    assert total <= budget < LIMIT
    for image, size in found:
        # As much detail as the budget allows: each image at the pixel ceiling, or using
        # most of its share of the budget.
        assert max(image.size) <= 1568 and size <= min(share, PER_IMAGE) + 4
        assert max(image.size) == 1568 or size > share // 2, (image.size, size, share)


async def test_a_30mb_text_is_cut_with_a_note_naming_the_full_text(
    client: RawClient, home: Path
) -> None:
    result = await call(client, "text30m")
    body = text(result)
    assert body.startswith("line 0000000 of the very long log")
    note = body.splitlines()[-1]
    assert note.startswith("[visiongate: this result was cut to fit the client's limit")
    path = Path(note.rsplit(" ", 1)[-1].rstrip("]"))
    full = path.read_text()
    assert len(full) == 30_000_000 and full.startswith(body.splitlines()[0])
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    fitted = read_trace(home / "trace.jsonl")[-1]["proxy"]["fitted"]
    assert fitted["text_chars"] == 30_000_000 and fitted["text_path"] == str(path)


async def test_an_embedded_5k_screenshot_fits_too(client: RawClient) -> None:
    result = await call(client, "embedded")
    ((image, _size),) = pictures(result)
    assert max(image.size) <= 1568


async def test_the_session_is_alive_after_all_of_it(client: RawClient) -> None:
    answer: dict[str, Any] = await client.request("tools/list")
    assert len(answer["result"]["tools"]) == 22 + 1  # and the proxy's own tool
    assert max(len(line) for line in client.lines) < LIMIT
