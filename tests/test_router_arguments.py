"""The public API's arguments are checked once, at the edge (issue 28): a typo or a wrong type
is one `ValueError` naming the argument and what it takes, before any decision is made; never
a bare `KeyError` from the payload guard, an `AttributeError` about `NoneType`, or a typo
accepted in silence."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import pytest

from visiongate import Gate, Router, VisiongateError
from visiongate.adapters.mcp.example_server import screenshot_png

PNG = screenshot_png()
RESULT = {
    "content": [{"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}]
}
TARGET = {"provider": "anthropic", "model": "claude-sonnet-4-5"}

# (method, positional arguments, keyword arguments) -> the message.
BAD_CALLS: dict[str, tuple[str, tuple[Any, ...], dict[str, Any], str]] = {
    "mcp api typo (had an image: KeyError)": (
        "mcp",
        (RESULT,),
        {**TARGET, "api": "anthropics"},
        "unknown api `anthropics`: did you mean `anthropic`?",
    ),
    "mcp api typo, text only (accepted in silence)": (
        "mcp",
        ({"content": [{"type": "text", "text": "hi"}]},),
        {**TARGET, "api": "anthropics"},
        "unknown api `anthropics`",
    ),
    "mcp provider None (AttributeError)": (
        "mcp",
        (RESULT,),
        {"provider": None, "model": "claude-sonnet-4-5"},
        "`provider` must be a non-empty string",
    ),
    "mcp blank model": (
        "mcp",
        (RESULT,),
        {"provider": "anthropic", "model": " "},
        "`model` must be a non-empty string",
    ),
    "mcp one string as seen_hashes": (
        "mcp",
        (RESULT,),
        {**TARGET, "seen_hashes": "ab12"},
        "`seen_hashes` must be a collection",
    ),
    "mcp image_budget 0": (
        "mcp",
        (RESULT,),
        {**TARGET, "image_budget": 0},
        "`image_budget` must be a whole number above 0",
    ),
    "mcp max_edge_px True": (
        "mcp",
        (RESULT,),
        {**TARGET, "max_edge_px": True},
        "`max_edge_px` must be a whole number",
    ),
    "mcp_text provider 42": (
        "mcp_text",
        (RESULT,),
        {"provider": 42, "model": "m"},
        "`provider` must be a non-empty string",
    ),
    "screenshot source typo": (
        "screenshot",
        (PNG,),
        {**TARGET, "source": "browsr"},
        "unknown screenshot source `browsr`: did you mean `browser`?",
    ),
    "screenshot source mcp": (
        "screenshot",
        (PNG,),
        {**TARGET, "source": "mcp"},
        "unknown screenshot source `mcp`",
    ),
    "screenshot of a str": (
        "screenshot",
        ("pixels",),
        {**TARGET, "source": "browser"},
        "`image` must be the image's bytes, not str",
    ),
    "vision_analyze api typo": (
        "vision_analyze",
        (PNG, "what is it?"),
        {**TARGET, "api": "gemeni"},
        "unknown api `gemeni`: did you mean `gemini`?",
    ),
}


@pytest.fixture
def router(tmp_path: Path) -> Router:
    return Router(Gate.load(trace=tmp_path / "trace.jsonl", routes=False), cache=tmp_path / "cache")


@pytest.mark.parametrize(("method", "args", "kwargs", "message"), BAD_CALLS.values(), ids=BAD_CALLS)
def test_a_bad_argument_is_one_value_error_and_no_record(
    method: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    message: str,
    router: Router,
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError) as caught:
        asyncio.run(getattr(router, method)(*args, **kwargs))
    assert isinstance(caught.value, VisiongateError)
    assert message in str(caught.value)
    trace = tmp_path / "trace.jsonl"
    assert not trace.exists() or trace.read_text() == ""  # nothing was decided


@pytest.mark.parametrize("api", ["anthropics", ""])
def test_payload_render_turn_and_bound_history_check_api_alike(api: str, router: Router) -> None:
    routed = asyncio.run(router.mcp(RESULT, **TARGET))
    for call in (
        lambda: router.payload(routed, api),
        lambda: router.render_turn([(routed, "call_1")], api),
        lambda: router.bound_history([], api),
    ):
        with pytest.raises(ValueError, match="unknown api"):
            call()


def test_good_arguments_still_route(router: Router) -> None:
    routed = asyncio.run(router.mcp(RESULT, **TARGET, api="anthropic", seen_hashes=["0" * 64]))
    assert routed.lane == "native" and router.payload(routed).api == "anthropic"
