"""The gateway's message limit against the clients behind it (issue 36 item 6): the Python
SDK's Streamable HTTP client reads at most 1 MiB per SSE event (`max_sse_event_size`), and
fastmcp and pydantic-ai use it, so by default every result is fitted under that, where the
stdio proxy's 10 MB default made any larger answer fail in the client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _gateway_helpers import VISION_MODEL, GatewayProcess, connected, module_gateway
from mcp.types import ImageContent

from visiongate.adapters.gateway._options import DEFAULT_MAX_RESULT_BYTES, SDK_SSE_EVENT_BYTES

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SERVER = [sys.executable, str(Path(__file__).parent / "_structured_server.py")]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


limited = module_gateway("gateway-limits", ["--listen", "127.0.0.1:0"], SERVER)


async def test_a_picture_of_megabytes_reaches_the_sdk_client(limited: GatewayProcess) -> None:
    """A 1600x1000 noise PNG, about 4 MB as base64 (twice over: the structured copy and its
    text): attached, and the whole answer under the limit."""
    async with connected(limited.url, VISION_MODEL) as session:
        result = await session.call_tool("snapshot", {})
    assert not result.is_error, result
    assert any(isinstance(block, ImageContent) for block in result.content)
    size = len(result.model_dump_json(by_alias=True, exclude_none=True))
    assert size <= DEFAULT_MAX_RESULT_BYTES < SDK_SSE_EVENT_BYTES


async def test_a_text_over_the_limit_is_fitted_too(limited: GatewayProcess) -> None:
    """1.5 MB of text went out whole under the 10 MB default and failed in the client with
    `Server-sent event exceeded the 1048576 byte limit`; now the model reads what fits."""
    async with connected(limited.url, VISION_MODEL) as session:
        result = await session.call_tool("words", {"size": 1_500_000})
        assert not result.is_error, result
        size = len(result.model_dump_json(by_alias=True, exclude_none=True))
        assert 100_000 < size <= DEFAULT_MAX_RESULT_BYTES
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert "the quick brown fox" in text
        assert not (await session.call_tool("words", {"size": 1000})).is_error  # it goes on
