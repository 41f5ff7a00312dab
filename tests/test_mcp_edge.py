"""Results of any shape reach the routing core, with either MCP SDK generation installed.

These tests build SDK models only through `model_validate` of wire JSON, which both the 1.x
and the 2.x SDK accept, so `test_mcp_sdk_versions.py` runs this file next to a 1.x SDK too.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp.types
import pytest
from PIL import Image

from visiongate.adapters import Router
from visiongate.adapters.wire._edge import InvalidToolResult, read_tool_result
from visiongate.adapters.wire._wire import ImageBlock, TextBlock
from visiongate.engine import Gate

HIDDEN = "".join(chr(0xE0000 + ord(char)) for char in "obey")
VISION = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def png() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 200)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


WIRE: dict[str, Any] = {
    "content": [
        {"type": "text", "text": "the screen", "annotations": {"audience": ["assistant"]}},
        {"type": "image", "data": png(), "mimeType": "image/png", "_meta": {"k": 1}},
    ],
    "structuredContent": {"width": 40},
    "isError": False,
    "_meta": {"com.example/id": "r1"},
}


@dataclasses.dataclass
class FastMCPLikeResult:
    """The FastMCP client's result: a dataclass with snake_case fields and SDK blocks."""

    content: list[Any]
    structured_content: dict[str, Any] | None
    meta: dict[str, Any] | None
    data: Any = None
    is_error: bool = False


def sdk_result() -> Any:
    return mcp.types.CallToolResult.model_validate(WIRE)


def shapes() -> dict[str, Any]:
    sdk = sdk_result()
    return {
        "sdk model": sdk,
        "wire dict": WIRE,
        "fastmcp dataclass": FastMCPLikeResult(
            content=list(sdk.content), structured_content={"width": 40}, meta=WIRE["_meta"]
        ),
        "plain object": SimpleNamespace(
            content=[SimpleNamespace(**block) for block in _snake_blocks()],
            structured_content={"width": 40},
            is_error=False,
            meta=WIRE["_meta"],
        ),
    }


def _snake_blocks() -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": "the screen", "annotations": {"audience": ["assistant"]}},
        {"type": "image", "data": WIRE["content"][1]["data"], "mime_type": "image/png"},
    ]


@pytest.mark.parametrize("shape", list(shapes()))
def test_every_shape_reads_into_the_same_wire_model(shape: str) -> None:
    result = read_tool_result(shapes()[shape])
    text, image = result.content
    assert isinstance(text, TextBlock) and text.text == "the screen"
    assert text.annotations is not None and text.annotations.audience == ("assistant",)
    assert isinstance(image, ImageBlock) and image.mime_type == "image/png"
    assert (result.structured_content, result.is_error) == ({"width": 40}, False)
    assert result.meta == {"com.example/id": "r1"}


@pytest.mark.parametrize("shape", list(shapes()))
def test_router_routes_every_shape(shape: str, tmp_path: Path) -> None:
    # Regression (issue 15): a FastMCP result failed with `AttributeError: ... 'model_copy'`
    # and a plain wire dict was refused.
    router = Router(Gate.load(), cache=tmp_path)
    routed = asyncio.run(router.mcp(shapes()[shape], tool_name="screenshot", **VISION))
    assert routed.lane == "native" and len(routed.images) == 1
    assert "the screen" in routed.text and "MEDIA:" in routed.text


def test_to_wire_is_the_input_back() -> None:
    # `isError: false` is the default, so the wire form leaves it out.
    assert read_tool_result(WIRE).to_wire() == {k: v for k, v in WIRE.items() if k != "isError"}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"content": "hi"}, "`content` must be an array, not a string"),
        ({}, "expected an object with `content`, got an object"),
        ([], "expected an object with `content`, got an array"),
        ({"content": [{"text": "x"}]}, "`content[0].type` is required"),
        ({"content": [{"type": "text"}]}, "`content[0].text` is required"),
        (
            {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x"}]},
            "`content[1].mimeType` is required",
        ),
        (
            {"content": [{"type": "image", "data": "x", "mimeType": 7}]},
            "`content[0].mimeType` must be a string, not a number",
        ),
        ({"content": [], "isError": "yes"}, "`isError` must be a boolean, not a string"),
        (
            {"content": [{"type": "resource", "resource": {"uri": "file:///a"}}]},
            "`content[0].resource` needs `text` or `blob`",
        ),
        (
            {"content": [{"type": "text", "text": "a", "annotations": {"audience": [1]}}]},
            "`content[0].annotations.audience[0]` must be a string, not a number",
        ),
    ],
)
def test_a_malformed_result_names_the_first_bad_field(broken: Any, message: str) -> None:
    with pytest.raises(InvalidToolResult) as caught:
        read_tool_result(broken)
    assert str(caught.value) == f"invalid tool result: {message}"


def test_a_malformed_result_writes_no_record(tmp_path: Path) -> None:
    records: list[Any] = []
    router = Router(Gate.load(trace=records.append), cache=tmp_path)
    with pytest.raises(ValueError, match=r"`content\[0\].data` is required"):
        asyncio.run(router.mcp({"content": [{"type": "image", "mimeType": "image/png"}]}, **VISION))
    assert records == []


def test_a_snake_case_error_flag_is_never_read_as_success() -> None:
    assert read_tool_result({"content": [], "is_error": True}).is_error


def test_an_unknown_content_type_is_a_note_not_a_failure(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path)
    result = {"content": [{"type": "hologram", "frames": 3}, {"type": "text", "text": "ok"}]}
    routed = asyncio.run(router.mcp(result, **VISION))
    assert "[content of type `hologram` omitted: this version cannot read it]" in routed.text


def test_routed_result_goes_back_to_an_sdk_result(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path)
    routed = asyncio.run(router.mcp(WIRE, **VISION))
    back = mcp.types.CallToolResult.model_validate(routed.to_mcp())
    kinds = [block.type for block in back.content]
    assert kinds == ["text", "image"]


# -- listings: what the model reads before any tool runs --------------------------------------


TOOLS_WIRE = {
    "tools": [
        {
            "name": "shot",
            "description": "takes a screenshot" + HIDDEN,
            "inputSchema": {"type": "object", "properties": {"x": {"description": "px" + HIDDEN}}},
        }
    ]
}


@pytest.mark.parametrize("form", ["sdk", "wire", "list"])
def test_sanitize_tools_cleans_every_form_and_returns_it(form: str, tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path)
    sdk = mcp.types.ListToolsResult.model_validate(TOOLS_WIRE)
    given = {"sdk": sdk, "wire": TOOLS_WIRE, "list": list(sdk.tools)}[form]
    cleaned = router.sanitize_tools(given)
    assert type(cleaned) is type(given)
    dumped = (
        cleaned
        if form == "wire"
        else mcp.types.ListToolsResult.model_validate(
            {"tools": [tool.model_dump(by_alias=True) for tool in cleaned]}
        ).model_dump(by_alias=True)
        if form == "list"
        else cleaned.model_dump(by_alias=True)
    )
    tool = dumped["tools"][0]
    assert tool["description"] == "takes a screenshot"
    assert tool["inputSchema"]["properties"]["x"]["description"] == "px"


def test_sanitize_resources_and_prompts(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path)
    resources = mcp.types.ListResourcesResult.model_validate(
        {"resources": [{"uri": "file:///a", "name": "a" + HIDDEN, "description": "d" + HIDDEN}]}
    )
    cleaned = router.sanitize_resources(resources)
    assert (cleaned.resources[0].name, cleaned.resources[0].description) == ("a", "d")
    prompts = {"prompts": [{"name": "p", "arguments": [{"name": "q", "description": HIDDEN}]}]}
    assert router.sanitize_prompts(prompts)["prompts"][0]["arguments"][0]["description"] == ""
    clean = {"prompts": [{"name": "p"}]}
    assert router.sanitize_prompts(clean) is clean


def test_sanitize_refuses_what_is_not_a_listing(tmp_path: Path) -> None:
    router = Router(Gate.load(), cache=tmp_path)
    with pytest.raises(ValueError, match="expected an MCP model, a wire dict or a list of them"):
        router.sanitize_tools(42)


@pytest.mark.parametrize(
    ("result", "note"),
    [
        ({"content": [{"type": "text", "text": "kept"}], "_meta": [1]}, "`_meta` was an array"),
        (
            {"content": [{"type": "text", "text": "kept", "_meta": "x"}]},
            "`content[0]._meta` was a string",
        ),
        (
            {
                "content": [
                    {"type": "resource", "resource": {"uri": "u", "text": "kept", "_meta": 3}}
                ]
            },
            "`content[0].resource._meta` was a number",
        ),
    ],
)
def test_a_malformed_meta_is_dropped_with_a_note_and_the_result_kept(
    result: dict[str, Any], note: str
) -> None:
    # Regression (issue 24): a `_meta` that was not an object made the whole result fail, so
    # its text and images were lost; the production agent drops the field and keeps the rest.
    read = read_tool_result(result)
    assert len(read.content) == 1 and read.meta is None
    assert read.dropped == (f"[{note}, not an object: dropped]",)
