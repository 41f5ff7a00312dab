"""Golden payloads: one routed result rendered for each of the six provider API shapes.

The golden files live in `tests/data/payloads/<api>-<case>.json`; regenerate them with
`VISIONGATE_REGEN_GOLDEN=1 pytest tests/test_payloads.py` and review the diff. The images are
small fixed byte strings, so the files do not depend on the image stage or on Pillow.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from visiongate.adapters._routed import RoutedResult
from visiongate.adapters.images import ProcessedImage
from visiongate.adapters.payloads._render import API_NAMES, render_payload
from visiongate.engine.facts.registry._registry import ProviderRegistry, ProviderRoute

GOLDEN = Path(__file__).parent / "data" / "payloads"
REGENERATE = os.environ.get("VISIONGATE_REGEN_GOLDEN") == "1"

PNG_4X3 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAFElEQVR4nGM8ISfHAANMDEgAhQMA"
    "JtoBCkAAOw8AAAAASUVORK5CYII="
)
JPEG_6X4 = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwg"


def picture(media_type: str, width: int, height: int, encoded: str) -> ProcessedImage:
    """A processed image made of fixed bytes, as the image stage would pass it through."""
    data = base64.b64decode(encoded)
    return ProcessedImage(
        data=data,
        media_type=media_type,
        width=width,
        height=height,
        original_width=width,
        original_height=height,
        scale_x=1.0,
        scale_y=1.0,
        scale_note=f"original size {width}x{height}; coordinates map 1:1",
        passthrough=True,
        encodes=0,
        sha256=hashlib.sha256(data).hexdigest(),
        source_media_type=media_type,
    )


IMAGES = (picture("image/png", 4, 3, PNG_4X3), picture("image/jpeg", 6, 4, JPEG_6X4))
TEXT_NATIVE = (
    "2 images\nMEDIA:/cache/aa.png\nMEDIA:/cache/bb.jpg\n"
    "[image 1 attached: 4x3 PNG]\n[image 2 attached: 6x4 JPEG]"
)
TEXT_LANE = (
    "2 images\nMEDIA:/cache/aa.png\nMEDIA:/cache/bb.jpg\n"
    "[2 image(s) kept out of the conversation (text lane); to learn what one shows, "
    "call vision_analyze with its MEDIA: path]"
)


def route_for(api: str, accepts: bool = True) -> ProviderRoute:
    limits = ProviderRegistry.bundled().apis[api]
    return ProviderRoute(
        provider=f"test-{api}",
        model="test-model",
        api=api,
        accepts_tool_images=accepts,
        reason="test route",
        formats=limits.formats,
        max_image_base64=limits.max_image_base64,
        max_edge_px=limits.max_edge_px,
        max_images_per_request=limits.max_images_per_request,
        known=True,
    )


def routed(api: str, case: str) -> RoutedResult:
    base = RoutedResult(
        source="mcp",
        lane="native",
        text=TEXT_NATIVE,
        route=route_for(api),
        images=IMAGES,
        tool_name="gallery",
    )
    if case == "native":
        return base
    if case == "text":
        return replace(base, lane="text", text=TEXT_LANE, images=())
    if case == "error":
        return replace(
            base, lane="native", text="error: the window was closed", images=(), is_error=True
        )
    raise AssertionError(case)


CASES = [(api, case) for api in API_NAMES for case in ("native", "text", "error")]


def check_golden(name: str, actual: dict[str, Any]) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(actual, indent=2, ensure_ascii=False) + "\n"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with VISIONGATE_REGEN_GOLDEN=1"
    assert json.loads(path.read_text(encoding="utf-8")) == actual


@pytest.mark.parametrize(("api", "case"), CASES, ids=[f"{a}-{c}" for a, c in CASES])
def test_golden_payload(api: str, case: str) -> None:
    payload = render_payload(routed(api, case), tool_call_id="call_7", tool_name="gallery")
    check_golden(f"{api}-{case}", payload.as_json())


@pytest.mark.parametrize("api", API_NAMES)
def test_text_lane_payload_has_no_pixels(api: str) -> None:
    # Even a text-lane result that wrongly carries images must not send them.
    result = replace(routed(api, "text"), images=IMAGES)
    payload = render_payload(result)
    encoded = json.dumps(payload.as_json())
    assert payload.images_sent == 0
    assert PNG_4X3 not in encoded and JPEG_6X4 not in encoded
    assert "not sent: the lane is `text`" in encoded


@pytest.mark.parametrize("api", API_NAMES)
def test_route_that_refuses_gets_summaries_not_pixels(api: str) -> None:
    result = replace(routed(api, "native"), route=route_for(api, accepts=False))
    payload = render_payload(result)
    encoded = json.dumps(payload.as_json())
    assert payload.images_sent == 0
    assert [item.index for item in payload.withheld] == [1, 2]
    assert PNG_4X3 not in encoded
    assert "[image 1 (4x3 PNG) not sent: the route refuses images in tool results" in encoded


def test_other_api_limits_apply_when_rendering_for_another_api() -> None:
    # Gemini takes no GIF: rendering an Anthropic result (GIF accepted) for Gemini withholds it.
    gif = picture("image/gif", 5, 5, "R0lGODlhAQABAAAAACw=")
    result = replace(routed("anthropic", "native"), images=(IMAGES[0], gif))
    payload = render_payload(result, "gemini")
    assert payload.images_sent == 1
    assert payload.withheld[0].index == 2
    assert "`image/gif` is not among the api's formats" in payload.withheld[0].reason


def test_oversized_image_is_withheld() -> None:
    big = picture("image/png", 9000, 10, PNG_4X3)
    payload = render_payload(replace(routed("anthropic", "native"), images=(big,)))
    assert payload.images_sent == 0
    assert "exceeds the api's 8000 px edge" in payload.withheld[0].reason


def test_openai_chat_sends_images_in_a_following_user_message() -> None:
    payload = render_payload(routed("openai-chat", "native"), tool_call_id="call_1")
    tool, user = payload.messages
    assert tool["role"] == "tool" and isinstance(tool["content"], str)
    assert user["role"] == "user"
    assert [part["type"] for part in user["content"]] == ["text", "image_url", "image_url"]


def test_unknown_api_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown api `soap`"):
        render_payload(routed("anthropic", "native"), "soap")
