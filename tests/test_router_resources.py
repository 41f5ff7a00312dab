"""`Router.mcp_resource`: the agent API's way to route a `resources/read` result (issue 34).

The proxy routed image blobs of `resources/read` through the gate, but an agent embedding the
`Router` had no way to: it handed the server's blob to the model as it came, a 1600x1000 PNG
of about 4.8 MB of base64 to a text-only model as well. The blobs here come from a real MCP
server over stdio (`tests/_resource_server.py`, the official SDK's `MCPServer`).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _image_samples import encode
from _resource_server import BROKEN_TEXT, SVG, busy_png
from _routing_helpers import make_router
from PIL import Image

from visiongate.adapters._resource_read import RoutedResource
from visiongate.adapters._router import Router
from visiongate.adapters.mcp._session import open_session

SERVER = [sys.executable, str(Path(__file__).parent / "_resource_server.py")]
VISION = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
TEXT_ONLY = {"provider": "deepseek", "model": "deepseek-chat"}


async def _read_all(uris: tuple[str, ...]) -> dict[str, Any]:
    async with open_session(SERVER) as session:
        return {uri: await session.read_resource(uri) for uri in uris}


@pytest.fixture(scope="module")
def reads() -> dict[str, Any]:
    """The SDK's `ReadResourceResult` of each resource, read once from the real server."""
    return asyncio.run(_read_all(("screen://shot", "screen://broken", "screen://logo")))


def router_at(home: Path) -> Router:
    return make_router(home / "cache", trace=str(home / "trace.jsonl"))


def records(home: Path) -> list[dict[str, Any]]:
    path = home / "trace.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def route(router: Router, result: object, **options: Any) -> RoutedResource:
    return asyncio.run(router.mcp_resource(result, **{**VISION, **options}))


def test_an_image_blob_is_fitted_in_the_native_lane(reads: dict[str, Any], tmp_path: Path) -> None:
    routed = route(router_at(tmp_path), reads["screen://shot"])
    image, note = routed.to_mcp()["contents"]
    assert image["uri"] == "screen://shot" and image["mimeType"] in ("image/jpeg", "image/webp")
    assert len(image["blob"]) <= 262_144
    with Image.open(io.BytesIO(base64.b64decode(image["blob"]))) as shown:
        assert max(shown.size) <= 1568 and shown.size != (1600, 1000)
    assert note["mimeType"] == "text/plain" and "downscaled from 1600x1000" in note["text"]
    assert Path(note["text"].splitlines()[0].removeprefix("MEDIA:")).is_file()
    assert len(routed.images) == 1 and routed.images[0].base64 == image["blob"]
    (record,) = records(tmp_path)
    assert record["execution"]["resource_uri"] == "screen://shot"
    assert len(record["execution"]["attached"]) == 1


def test_the_text_lane_sends_the_media_path_and_no_pixels(
    reads: dict[str, Any], tmp_path: Path
) -> None:
    routed = route(router_at(tmp_path), reads["screen://shot"], **TEXT_ONLY)
    (only,) = routed.to_mcp()["contents"]
    assert "blob" not in only and routed.images == ()
    path = Path(only["text"].splitlines()[0].removeprefix("MEDIA:"))
    assert path.read_bytes().startswith(b"\x89PNG")
    (record,) = records(tmp_path)
    assert record["lane"] == "text" and record["execution"]["attached"] == []


def test_a_corrupt_blob_is_refused_and_the_text_survives(
    reads: dict[str, Any], tmp_path: Path
) -> None:
    routed = route(router_at(tmp_path), reads["screen://broken"])
    text, refused = routed.to_mcp()["contents"]
    assert text["text"] == BROKEN_TEXT
    assert "not attached: refused: png image is truncated or corrupt" in refused["text"]
    assert routed.images == () and BROKEN_TEXT in routed.text


def test_an_svg_blob_passes_as_it_came_and_records_nothing(
    reads: dict[str, Any], tmp_path: Path
) -> None:
    routed = route(router_at(tmp_path), reads["screen://logo"])
    (logo,) = routed.to_mcp()["contents"]
    assert base64.b64decode(logo["blob"]) == SVG and routed.routed == ()
    assert records(tmp_path) == []


def test_the_image_budget_is_shared_by_the_blobs_of_a_wire_result(tmp_path: Path) -> None:
    blob = base64.b64encode(busy_png()).decode("ascii")
    small = Image.new("RGB", (300, 200), (40, 90, 160))
    wire = {
        "contents": [
            {"uri": "screen://a", "mimeType": "image/png", "blob": blob},
            {"uri": "screen://b", "mimeType": "IMAGE/PNG", "blob": blob},
            {"uri": "icon://c", "mimeType": "image/png", "blob": _b64(encode(small, "PNG"))},
        ]
    }
    routed = route(router_at(tmp_path), wire, image_budget=300_000)
    assert [len(one.images) for one in routed.routed] == [1, 1, 1]
    assert all(len(image.base64) <= 100_000 for image in routed.images)
    assert [record["execution"]["resource_uri"] for record in records(tmp_path)] == [
        "screen://a",
        "screen://b",
        "icon://c",
    ]


def test_text_contents_are_cleaned_as_any_resource_is(tmp_path: Path) -> None:
    wire = {"contents": [{"uri": "note://1", "mimeType": "text/plain", "text": "ok\u200bay"}]}
    routed = route(router_at(tmp_path), wire)
    assert routed.to_mcp() == {
        "contents": [{"uri": "note://1", "mimeType": "text/plain", "text": "okay"}]
    }


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"contents": "not a list"}, "needs a list of `contents`"),
        ({"contents": ["text"]}, "`contents[0]` of a resources/read result is not an object"),
    ],
)
def test_a_malformed_result_raises_and_records_nothing(
    result: object, message: str, tmp_path: Path
) -> None:
    with pytest.raises(ValueError) as raised:
        route(router_at(tmp_path), result)
    assert message in str(raised.value)
    assert records(tmp_path) == []


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
