"""An image already in the conversation is not attached again (the caller passes its hashes)."""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path

from mcp.types import CallToolResult, ImageContent
from PIL import Image

from visiongate.adapters import Router
from visiongate.engine import Gate


def _png(color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buffer, "PNG")
    return buffer.getvalue()


def _result(*images: bytes) -> CallToolResult:
    blocks = [
        ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type="image/png")
        for data in images
    ]
    return CallToolResult(content=list(blocks))


def test_an_image_seen_earlier_in_the_conversation_is_skipped_with_a_note(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path / "cache")
    red, blue = _png((200, 0, 0)), _png((0, 0, 200))

    async def scenario() -> tuple[list[str], list[str], str]:
        first = await router.mcp(_result(red), provider="anthropic", model="claude-sonnet-4-5")
        seen = [image.sha256 for image in first.images]
        second = await router.mcp(
            _result(red, blue), provider="anthropic", model="claude-sonnet-4-5", seen_hashes=seen
        )
        return seen, [image.sha256 for image in second.images], second.text

    seen, attached, text = asyncio.run(scenario())
    assert len(seen) == 1
    assert attached and seen[0] not in attached  # only the new (blue) image is attached
    assert "same image as one already in the conversation" in text
    assert text.count("MEDIA:") == 2  # the skipped image keeps its path


def test_a_screenshot_seen_earlier_is_not_attached_again(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path / "cache")
    shot = _png((10, 120, 10))

    async def scenario() -> tuple[int, int]:
        first = await router.screenshot(
            shot, source="computer_use", provider="anthropic", model="claude-sonnet-4-5"
        )
        again = await router.screenshot(
            shot,
            source="computer_use",
            provider="anthropic",
            model="claude-sonnet-4-5",
            seen_hashes=[image.sha256 for image in first.images],
        )
        return len(first.images), len(again.images)

    assert asyncio.run(scenario()) == (1, 0)
