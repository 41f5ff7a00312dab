"""Full-page captures and strips through the router (issue 27): tiles, then the text lane."""

from __future__ import annotations

import asyncio
import base64
from functools import cache
from pathlib import Path

import pytest
from _image_samples import encode, screenshot
from _routing_helpers import DESCRIPTION, VisionEndpoint, endpoint_backend, make_router
from PIL import Image

from visiongate.adapters._routed import RoutedResult

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
POLICIES = Path(__file__).resolve().parent.parent / "policies"


@cache
def full_page() -> bytes:
    return encode(screenshot(1280, 12000, seed=5), "PNG")


def mcp_result(data: bytes) -> dict[str, object]:
    encoded = base64.b64encode(data).decode("ascii")
    return {"content": [{"type": "image", "data": encoded, "mimeType": "image/png"}]}


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_a_full_page_from_an_mcp_server_comes_as_tiles_and_names_the_rows_left(
    tmp_path: Path,
) -> None:
    router = make_router(tmp_path / "cache")
    routed = asyncio.run(router.mcp(mcp_result(full_page()), **NATIVE, trace=False))
    lines = routed.text.splitlines()
    (path,) = routed.media_paths
    assert lines[0] == f"MEDIA:{path}"
    tiles = [line for line in lines if line.startswith("[image 1 attached: 1152x1568 ")]
    assert len(tiles) == len(routed.images) == 4
    assert "tile 1 of 4: rows 0-1742 of the 1280x12000 original" in tiles[0]
    assert "tile 4 of 4: rows 4965-6707 of the 1280x12000 original" in tiles[3]
    assert (
        "[image 1: rows 6707-12000 of the 1280x12000 original are not attached: 4 tile(s) at "
        "scale 0.90, the least that keeps text legible, take every image slot left in this "
        "result; the whole image is at its MEDIA: path]"
    ) in lines
    attached = routed.record["execution"]["attached"]
    assert [entry["size"] for entry in attached] == [[1152, 1568]] * 4
    assert routed.descriptions == ()  # mcp's text lane references by default


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_a_browser_full_page_has_the_rows_left_described_in_legible_pieces(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    router = make_router(tmp_path / "cache", vision=endpoint_backend(endpoint))
    before = len(endpoint.questions)
    routed = asyncio.run(router.screenshot(full_page(), source="browser", **NATIVE))
    assert len(routed.images) == 4
    assert len(endpoint.questions) - before == len(routed.descriptions) == 4
    text = routed.text
    (path,) = routed.media_paths
    assert (
        f"[description of the screenshot, rows 6707-8449 ({path}), not the tool's own output:]"
        in text.splitlines()
    )
    assert text.count(DESCRIPTION) == 4
    assert "; described above from its pixels]" in text
    assert text.index("[description of") < text.index("[screenshot attached:")


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_mcp_with_a_describing_text_lane_describes_the_rows_left(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    policy = tmp_path / "describe-mcp.yaml"
    text = (POLICIES / "default.yaml").read_text()
    assert "    mcp: reference" in text
    policy.write_text(text.replace("    mcp: reference", "    mcp: describe", 1))
    router = make_router(tmp_path / "cache", policy=str(policy), vision=endpoint_backend(endpoint))
    routed = asyncio.run(router.mcp(mcp_result(full_page()), **NATIVE, trace=False))
    assert len(routed.images) == 4 and len(routed.descriptions) == 4
    described = routed.record["execution"]["described"]
    assert described[0]["part"] == "rows 6707-8449"
    assert "[description of image 1, rows 6707-8449 (" in routed.text


@pytest.mark.parametrize("source", ["mcp", "browser"])
def test_an_extreme_strip_is_refused_and_keeps_its_path(tmp_path: Path, source: str) -> None:
    strip = encode(Image.new("RGB", (60000, 64), (30, 90, 200)), "PNG")
    router = make_router(tmp_path / "cache")
    if source == "mcp":
        routed: RoutedResult = asyncio.run(router.mcp(mcp_result(strip), **NATIVE, trace=False))
        label = "image 1"
    else:
        routed = asyncio.run(router.screenshot(strip, source="browser", **NATIVE))
        label = "screenshot"
    assert routed.images == ()
    (path,) = routed.media_paths
    assert Path(path).read_bytes() == strip
    assert f"MEDIA:{path}" in routed.text.splitlines()
    assert (
        f"[{label} not attached: refused: a 60000x64 strip would be 1568x2 at the 1568 px "
        "ceiling, under 13 px across: no fit of it shows anything]"
    ) in routed.text.splitlines()
