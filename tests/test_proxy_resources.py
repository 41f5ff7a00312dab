"""Regression (issue 34): image blobs from `resources/read` bypassed the gate.

A resource whose contents carry an image `blob` passed through `visiongate proxy` as the
server sent it: a text-only model was handed the pixels, and a 1600x1000 screenshot (4.8 MB
of base64) failed the desktop client's 1 MB limit as an error. They now go through the same
image stage and lanes as a tool result's images, against `tests/_resource_server.py` (the
official SDK's `MCPServer`).
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import pytest
from _proxy_helpers import TEXT_ONLY, VISION, proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from mcp.types import BlobResourceContents, TextResourceContents
from PIL import Image

SERVER = [sys.executable, str(Path(__file__).parent / "_resource_server.py")]
sys.path.insert(0, str(Path(__file__).parent))
from _resource_server import BROKEN_TEXT, SVG  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def argv(home: Path, target: list[str], *options: str) -> list[str]:
    trace = str(home / "trace.jsonl")
    return proxy_argv(SERVER, "--trace", trace, *options, target=target)


@pytest.mark.anyio
async def test_an_image_resource_is_fitted_within_the_desktop_clients_limit(
    tmp_path: Path,
) -> None:
    async with proxied(argv(tmp_path, VISION, "--client", "claude-desktop"), tmp_path) as session:
        read = await session.read_resource("screen://shot")
    image, note = read.contents
    assert isinstance(image, BlobResourceContents) and str(image.uri) == "screen://shot"
    assert image.mime_type in ("image/jpeg", "image/webp")
    assert len(image.blob) <= 262_144
    with Image.open(io.BytesIO(base64.b64decode(image.blob))) as shown:
        assert max(shown.size) <= 1568 and shown.size != (1600, 1000)
    assert isinstance(note, TextResourceContents) and note.mime_type == "text/plain"
    assert note.text.startswith("MEDIA:") and "downscaled from 1600x1000" in note.text
    assert Path(note.text.splitlines()[0].removeprefix("MEDIA:")).is_file()
    (record,) = read_trace(tmp_path / "trace.jsonl")
    assert record["proxy"]["resource_uri"] == "screen://shot"
    assert len(record["execution"]["attached"]) == 1


@pytest.mark.anyio
async def test_the_text_lane_keeps_an_image_resource_out_with_its_media_path(
    tmp_path: Path,
) -> None:
    async with proxied(argv(tmp_path, TEXT_ONLY), tmp_path) as session:
        read = await session.read_resource("screen://shot")
    (only,) = read.contents
    assert isinstance(only, TextResourceContents)
    path = Path(only.text.splitlines()[0].removeprefix("MEDIA:"))
    assert path.is_file() and path.read_bytes().startswith(b"\x89PNG")
    assert "kept out of the conversation (text lane)" in only.text
    (record,) = read_trace(tmp_path / "trace.jsonl")
    assert record["lane"] == "text" and record["execution"]["attached"] == []


@pytest.mark.anyio
async def test_a_corrupt_image_blob_is_refused_and_the_text_survives(tmp_path: Path) -> None:
    async with proxied(argv(tmp_path, VISION), tmp_path) as session:
        read = await session.read_resource("screen://broken")
    text, refused = read.contents
    assert isinstance(text, TextResourceContents) and text.text == BROKEN_TEXT
    assert isinstance(refused, TextResourceContents)
    assert "not attached: refused: png image is truncated or corrupt" in refused.text
    assert not any(isinstance(content, BlobResourceContents) for content in read.contents)


@pytest.mark.anyio
async def test_a_blob_the_image_stage_does_not_read_passes_as_it_came(tmp_path: Path) -> None:
    async with proxied(argv(tmp_path, TEXT_ONLY), tmp_path) as session:
        read = await session.read_resource("screen://logo")
    (logo,) = read.contents
    assert isinstance(logo, BlobResourceContents) and base64.b64decode(logo.blob) == SVG
    assert read_trace(tmp_path / "trace.jsonl") == []
