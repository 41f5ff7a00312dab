"""The MCP adapter against the example server, over stdio, through the official SDK.

One server process serves the whole module; each test routes real `CallToolResult`s for a
lane or an adversarial tool and checks the result, the payloads and the cache on disk.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _routing_helpers import (
    DESCRIPTION,
    UNREACHABLE,
    VisionEndpoint,
    aux_config,
    make_router,
)
from _warm import server_command
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from visiongate.adapters._router import Router
from visiongate.adapters.images import _batch as _image_batch
from visiongate.adapters.mcp.example_server import ENGLAND_FLAG, screenshot_png, tile_png
from visiongate.adapters.payloads._render import API_NAMES

pytestmark = pytest.mark.anyio

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
TAG_RANGE = range(0xE0000, 0xE0080)

# -- watching which files the process opens (audit hooks are permanent, so this one is cheap
# -- when no test is watching) -------------------------------------------------------------

_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], str | bytes):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


# -- fixtures ---------------------------------------------------------------------------------


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
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("integration") / "images"


@pytest.fixture(scope="module")
def native_router(cache: Path) -> Router:
    return make_router(cache)


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments or None)


def payload_texts(router: Router, routed: Any) -> dict[str, str]:
    # Gemini's function name comes from the call; these results were routed without one.
    return {
        api: json.dumps(router.payload(routed, api, tool_name="screenshot").as_json())
        for api in API_NAMES
    }


def assert_private(path: Path) -> None:
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


# -- lanes ------------------------------------------------------------------------------------


async def test_native_lane_attaches_the_screenshot_fitted_to_the_route(
    session: ClientSession, native_router: Router
) -> None:
    routed = await native_router.mcp(await call(session, "screenshot"), **NATIVE)
    assert routed.lane == "native"
    (image,) = routed.images
    assert max(image.width, image.height) <= 1568
    assert len(image.base64) <= 262_144
    assert (image.original_width, image.original_height) == (2560, 1440)
    (path,) = routed.media_paths
    assert f"MEDIA:{path}" in routed.text.splitlines()
    assert Path(path).read_bytes() == screenshot_png()
    assert Path(path).name == hashlib.sha256(screenshot_png()).hexdigest() + ".png"
    assert_private(Path(path))
    anthropic = native_router.payload(routed).as_json()
    blocks = anthropic["messages"][0]["content"][0]["content"]
    assert [block["type"] for block in blocks] == ["text", "image"]
    assert blocks[1]["source"]["data"] == image.base64


async def test_native_lane_attaches_four_of_six_and_keeps_every_path(
    session: ClientSession, native_router: Router
) -> None:
    routed = await native_router.mcp(await call(session, "gallery"), **NATIVE)
    assert len(routed.images) == 4
    assert len(routed.media_paths) == 6
    media_lines = [line for line in routed.text.splitlines() if line.startswith("MEDIA:")]
    assert len(media_lines) == 6
    assert "[image 5 not attached: at most 4 images are attached per result" in routed.text
    execution = routed.record["execution"]
    assert [item["index"] for item in execution["attached"]] == [1, 2, 3, 4]
    assert [item["index"] for item in execution["refused"]] == [5, 6]
    for path in routed.media_paths:
        assert_private(Path(path))


async def test_text_lane_references_paths_and_sends_no_pixels(
    session: ClientSession, cache: Path
) -> None:
    router = make_router(cache, {"agent": {"image_input_mode": "text"}})
    result = await call(session, "gallery")
    routed = await router.mcp(result, **NATIVE)
    assert routed.lane == "text" and routed.images == ()
    assert routed.record["execution"]["action"] == "reference"
    assert "6 image(s) kept out of the conversation (text lane)" in routed.text
    originals = [block.data for block in result.content if block.type == "image"]
    for api, text in payload_texts(router, routed).items():
        assert not any(original in text for original in originals), api
        assert "data:image" not in text and '"inlineData"' not in text and '"image"' not in text


async def test_text_lane_describe_uses_the_auxiliary_backend(
    session: ClientSession, cache: Path, endpoint: VisionEndpoint
) -> None:
    router = make_router(cache, aux_config(endpoint.base_url), policy="examples/describe-mcp")
    routed = await router.mcp(await call(session, "screenshot"), **NATIVE)
    assert routed.lane == "text" and routed.images == ()
    assert routed.description is not None and routed.description.ok
    assert DESCRIPTION in routed.text
    assert routed.record["execution"]["described"][0]["ok"] is True
    for api, text in payload_texts(router, routed).items():
        assert "iVBORw0KGgo" not in text, api  # no PNG, in any encoding the payload could use


async def test_text_lane_says_vision_is_unavailable_when_the_backend_fails(
    session: ClientSession, cache: Path
) -> None:
    router = make_router(cache, aux_config(UNREACHABLE), policy="examples/describe-mcp")
    routed = await router.mcp(await call(session, "screenshot"), **NATIVE)
    assert routed.images == ()
    assert routed.description is not None and not routed.description.ok
    assert "[vision unavailable:" in routed.text
    assert routed.media_paths[0] in routed.text


# -- adversarial tools ------------------------------------------------------------------------


async def test_broken_image_is_refused_not_attached(
    session: ClientSession, native_router: Router
) -> None:
    routed = await native_router.mcp(await call(session, "broken_image"), **NATIVE)
    assert routed.images == ()
    (refused,) = routed.record["execution"]["refused"]
    assert "truncated" in refused["reason"]
    assert "[image 1 not attached: refused:" in routed.text
    assert "here is the chart" in routed.text


async def test_smuggled_media_path_is_never_read(
    session: ClientSession, native_router: Router, tmp_path: Path
) -> None:
    global _opened
    sentinel = tmp_path / "secret.txt"
    sentinel.write_text("SENTINEL-5f2a", encoding="utf-8")
    result = await call(session, "smuggle", media_path=str(sentinel))
    _opened = []
    try:
        routed = await native_router.mcp(result, **NATIVE)
        texts = payload_texts(native_router, routed)
    finally:
        opened, _opened = _opened, None
    assert any(path.startswith(str(native_router.cache.directory)) for path in opened)  # control
    assert str(sentinel) not in opened
    assert f"[unverified] MEDIA:{sentinel}" in routed.text
    assert str(sentinel) not in routed.media_paths
    assert all(image.sha256 == hashlib.sha256(tile_png(7)).hexdigest() for image in routed.images)
    assert len(routed.images) == 1
    assert not any("SENTINEL-5f2a" in text for text in texts.values())


async def test_smuggled_tags_and_reserved_meta_are_removed(
    session: ClientSession, native_router: Router
) -> None:
    routed = await native_router.mcp(await call(session, "smuggle"), **NATIVE)
    without_flag = routed.text.replace(ENGLAND_FLAG, "")
    assert ENGLAND_FLAG in routed.text
    assert not any(ord(character) in TAG_RANGE for character in without_flag)
    assert routed.structured_content == {"city": "London", "temp_c": 14}
    assert routed.meta == {"com.example/trace": "trace-42"}
    assert '_meta: {"com.example/trace": "trace-42"}' in routed.text
    assert "io.modelcontextprotocol" not in routed.text and "mcp.dev" not in routed.text
    counts = routed.record["sanitizer"]
    assert counts["meta"]["reserved_keys"] == 3
    assert counts["text"]["tag_chars"] > 0 and counts["structured_content"]["tag_chars"] == 10


async def test_error_result_stays_text(session: ClientSession, native_router: Router) -> None:
    routed = await native_router.mcp(await call(session, "fails"), **NATIVE)
    assert routed.is_error and routed.images == ()
    assert "error: the window was closed" in routed.text
    assert "the tool reported an error, so its result stays text" in routed.text
    assert_private(Path(routed.media_paths[0]))
    block = native_router.payload(routed).as_json()["messages"][0]["content"][0]
    assert block["is_error"] is True
    assert all(part["type"] == "text" for part in block["content"])


async def test_embedded_blob_image_counts_as_an_image(
    session: ClientSession, native_router: Router
) -> None:
    routed = await native_router.mcp(await call(session, "embedded_image"), **NATIVE)
    assert len(routed.images) == 1
    assert routed.images[0].sha256 == hashlib.sha256(screenshot_png()).hexdigest()


async def test_resource_link_stays_a_link(session: ClientSession, native_router: Router) -> None:
    routed = await native_router.mcp(await call(session, "link"), **NATIVE)
    assert routed.images == () and routed.media_paths == ()
    assert "[resource link: q3-chart.png <file:///srv/reports/q3-chart.png>" in routed.text


async def test_user_audience_is_not_shown_to_the_model(
    session: ClientSession, native_router: Router
) -> None:
    """Issue 23: the user's text and image were deleted, and the model was handed the path of
    an image meant for the user only. The client gets both with their annotations; the model
    a note counting them, no path."""
    routed = await native_router.mcp(await call(session, "for_user"), **NATIVE)
    assert routed.images == () and routed.media_paths == ()
    assert "user-only" not in routed.text and "MEDIA:" not in routed.text
    assert "saved the preview for the user" in routed.text
    assert "[2 part(s) of this result are for the user only (audience)" in routed.text
    text, image = routed.client.passed
    assert text == {
        "type": "text",
        "text": "(user-only: preview shown in the side panel)",
        "annotations": {"audience": ["user"]},
    }
    assert image["type"] == "image" and image["annotations"] == {"audience": ["user"]}
    assert base64.b64decode(image["data"]) == tile_png(21)
    wire = CallToolResult.model_validate(routed.to_mcp())
    assert [block.type for block in wire.content] == ["text", "text", "image"]
    execution = routed.record["execution"]
    assert execution["media_paths"] == [] and len(execution["user_media_paths"]) == 1


async def test_plain_string_api_returns_the_text_half(
    session: ClientSession, native_router: Router
) -> None:
    text = await native_router.mcp_text(await call(session, "tile", number=3), **NATIVE)
    assert isinstance(text, str)
    assert text.splitlines()[0] == "tile 3"
    assert text.splitlines()[1].startswith("MEDIA:")


async def test_each_routing_writes_one_execution_record_to_the_trace(
    session: ClientSession, cache: Path
) -> None:
    records: list[dict[str, Any]] = []
    router = make_router(cache, trace=records.append)
    await router.mcp(await call(session, "tile", number=4), **NATIVE, tool_name="tile")
    routed_records = [record for record in records if "execution" in record]
    assert len(routed_records) == 1
    record = routed_records[0]
    assert record["source"] == "mcp" and record["lane"] == "native"
    assert record["execution"]["tool_name"] == "tile"
    assert record["execution"]["attached"][0]["sha256"] == hashlib.sha256(tile_png(4)).hexdigest()


async def test_image_work_runs_off_the_event_loop(
    session: ClientSession, native_router: Router, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Watch the image stage's per-image function: the thread it runs on must not be the loop's.
    threads: list[threading.Thread] = []
    process = _image_batch.process_with_digest

    def watched(*arguments: Any) -> Any:
        threads.append(threading.current_thread())
        return process(*arguments)

    monkeypatch.setattr(_image_batch, "process_with_digest", watched)
    _image_batch.default_worker().fit_cache.clear()  # fitted by an earlier test: do it again
    routed = await native_router.mcp(await call(session, "screenshot"), **NATIVE)
    assert len(routed.images) == 1
    assert threads and threading.current_thread() not in threads


# -- concurrency --------------------------------------------------------------------------------


async def test_simultaneous_calls_each_get_only_their_own_image(
    session: ClientSession, native_router: Router
) -> None:
    numbers = list(range(100, 120))

    async def one(number: int) -> tuple[int, Any]:
        result = await call(session, "tile", number=number)
        return number, await native_router.mcp(result, **NATIVE)

    for number, routed in await asyncio.gather(*(one(number) for number in numbers)):
        digest = hashlib.sha256(tile_png(number)).hexdigest()
        assert routed.text.startswith(f"tile {number}\n")
        assert [image.sha256 for image in routed.images] == [digest]
        assert [Path(path).name for path in routed.media_paths] == [f"{digest}.png"]
