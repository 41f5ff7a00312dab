"""The hostile test server's `lying_images` tool (`_hostile_mcp.py`), over stdio, through the
router and the CLI.

Each sample is more or less than the image it claims to be; none may reach a provider as it
was sent: re-encoded from its pixels, or refused with the reason, and the rest of the result
goes through.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _lying_images import INJECTION, LyingImage, lying_images
from _routing_helpers import make_router
from _warm import hostile_command as server_command
from mcp import ClientSession, StdioServerParameters, stdio_client

from visiongate.adapters._router import Router
from visiongate.adapters.payloads._render import API_NAMES

pytestmark = pytest.mark.anyio

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def session(anyio_backend: str) -> AsyncIterator[ClientSession]:
    program, *arguments = server_command()
    server = StdioServerParameters(command=program, args=arguments)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    return make_router(tmp_path_factory.mktemp("lying") / "images")


@pytest.mark.parametrize("sample", lying_images(), ids=lambda sample: sample.name)
async def test_no_lying_image_reaches_the_model_as_it_was_sent(
    session: ClientSession, router: Router, sample: LyingImage
) -> None:
    result = await session.call_tool("lying_images", {"name": sample.name})
    routed = await router.mcp(result, **NATIVE, tool_name="lying_images")
    assert routed.lane == "native"
    assert f"sample {sample.name}" in routed.text
    if sample.outcome == "refused":
        assert routed.images == ()
        (refused,) = routed.record["execution"]["refused"]
        assert "ends before the image is filled" in refused["reason"]
        assert "[image 1 not attached: refused:" in routed.text
    else:
        (image,) = routed.images
        assert not image.passthrough or image.metadata_removed
        assert sample.hidden is None or sample.hidden not in image.data
    sent = base64.b64encode(sample.data).decode("ascii")
    for api in API_NAMES:
        text = json.dumps(router.payload(routed, api).as_json())
        assert sent not in text and INJECTION not in text, api


async def test_all_samples_in_one_result_attach_the_first_four_that_can_be(
    session: ClientSession, tmp_path: Path
) -> None:
    router = make_router(tmp_path / "images")  # a fresh conversation: nothing seen yet
    result = await session.call_tool("lying_images", {})
    routed = await router.mcp(result, **NATIVE, tool_name="lying_images")
    candidates = [sample for sample in lying_images() if sample.outcome == "re-encoded"]
    expected = [hashlib.sha256(sample.data).hexdigest() for sample in candidates[:4]]
    assert [image.sha256 for image in routed.images] == expected
    assert all(image.data not in {s.data for s in candidates} for image in routed.images)


def test_mcp_call_attaches_a_gif_with_a_1mb_comment_instead_of_failing(tmp_path: Path) -> None:
    # It used to exit 2 with `the MCP server failed: Comment is too long`.
    command = [
        sys.executable,
        "-m",
        "visiongate",
        "mcp",
        "call",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--tool",
        "lying_images",
        "--args",
        json.dumps({"name": "gif-1mb-comment"}),
        "--",
        *server_command(),
    ]
    environment = {**os.environ, "VISIONGATE_CACHE_DIR": str(tmp_path / "cache")}
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=environment
    )
    assert completed.returncode == 0, completed.stderr
    record: dict[str, Any] = json.loads(completed.stdout)["record"]
    (attached,) = record["execution"]["attached"]
    assert record["execution"]["refused"] == []
    assert attached["index"] == 1
