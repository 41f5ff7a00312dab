"""Structured content, `_meta` and text as second copies of a tool result, for library users
of `Router.mcp` (issue 23): images found at any depth get the lane of the result, user-only
content passes to the client, text blobs are text, schemas are widened only where needed."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from _image_samples import screenshot
from mcp.types import CallToolResult

from visiongate.adapters import Router
from visiongate.adapters.mcp.example_server import tile_png
from visiongate.adapters.wire._edge import read_tool_result
from visiongate.adapters.wire._inline import find_inline
from visiongate.adapters.wire._schemas import relaxed_output_schema, schema_problem
from visiongate.adapters.wire._text import decoded_text_blobs
from visiongate.adapters.wire._wire import BlobContents, TextContents
from visiongate.engine import Gate

pytestmark = pytest.mark.anyio
NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
TEXT = {"provider": "deepseek", "model": "deepseek-chat"}
PNG = tile_png(3)
B64 = base64.b64encode(PNG).decode("ascii")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def router(tmp_path: Path, user_only: str | None = None, **options: Any) -> Router:
    policy = None
    if user_only is not None:
        text = (ROOT / "policies" / "default.yaml").read_text()
        policy = tmp_path / "policy.yaml"
        policy.write_text(text.replace("execution:\n", f"execution:\n  user_only: {user_only}\n"))
    return Router(Gate.load(policy=policy), cache=tmp_path / "images", **options)


# -- finding images ------------------------------------------------------------------------------


def test_image_payloads_are_found_at_any_depth() -> None:
    value = {
        "a": [{"deep": {"data": B64, "mimeType": "image/png"}}],
        "blob": {"blob": B64, "mime_type": "application/octet-stream"},  # sniffed: a PNG
        "url": f"data:image/png;base64,{B64}",
        "bare": B64,
        "not an image": "QUFB" * 100,
        "broken": {"data": "not base64!", "mimeType": "image/png"},
        "text": "a sentence that is long enough to be looked at, but is no base64 at all",
    }
    found = {payload.path: payload.kind for payload in find_inline(value)}
    assert found == {
        ("a", 0, "deep"): "object",
        ("blob",): "object",
        ("url",): "data_url",
        ("bare",): "bare",
    }
    assert all(payload.data == PNG for payload in find_inline(value))


def test_a_schema_routing_cannot_break_is_listed_as_declared() -> None:
    media = {
        "type": "object",
        "properties": {"data": {"type": "string"}, "mimeType": {"type": "string"}},
        "additionalProperties": False,
    }
    assert relaxed_output_schema(media).schema is media
    pinned = {
        "type": "object",
        "properties": {
            "shots": {"type": "array", "items": {"$ref": "#/$defs/Shot"}},
            "name": {"type": "string", "pattern": "^[a-z]+$"},
        },
        "$defs": {
            "Shot": {
                "type": "object",
                "properties": {"blob": {"type": "string", "minLength": 100}},
            }
        },
    }
    relaxed = relaxed_output_schema(pinned)
    assert relaxed.changes == ("/$defs/Shot/properties/blob: minLength",)
    assert relaxed.schema["properties"]["name"] == pinned["properties"]["name"]
    assert schema_problem(relaxed.schema, {"shots": [{"blob": "MEDIA:/a.png"}]}) is None
    assert schema_problem(pinned, {"shots": [{"blob": "MEDIA:/a.png"}]}) is not None


def test_blobs_of_a_text_type_are_read_as_text() -> None:
    """Issue 23: a `text/plain` blob resource was dropped as "not text and not an image"."""

    def blob(data: bytes, mime_type: str) -> dict[str, Any]:
        encoded = base64.b64encode(data).decode("ascii")
        resource = {"uri": "file:///r", "mimeType": mime_type, "blob": encoded}
        return {"type": "resource", "resource": resource}

    result = read_tool_result(
        {
            "content": [
                blob(b"hello", "text/plain"),
                blob("café".encode("latin-1"), "text/csv; charset=latin-1"),
                blob(b'{"a": 1}', "application/vnd.api+json"),
                blob(b"\xff\xfe\xfa", "text/plain"),  # not UTF-8: stays a blob
                blob(PNG, "text/plain"),  # an image whatever it says
                blob(b"%PDF-1.7", "application/pdf"),
            ]
        }
    )
    kinds = [block.resource for block in decoded_text_blobs(result).content]  # type: ignore[union-attr]
    assert [getattr(item, "text", None) for item in kinds[:3]] == ["hello", "café", '{"a": 1}']
    assert all(isinstance(item, TextContents) for item in kinds[:3])
    assert all(isinstance(item, BlobContents) for item in kinds[3:])


# -- Router.mcp ----------------------------------------------------------------------------------


async def test_structured_only_images_are_images_of_the_result(tmp_path: Path) -> None:
    """A tool without an output schema whose structured content holds the image: the native
    lane attaches it; the text's JSON line and `_meta` line name it by its `MEDIA:` path."""
    result = {
        "content": [{"type": "text", "text": "done"}],
        "structuredContent": {"shot": {"data": B64, "mimeType": "image/png"}},
        "_meta": {"example.com/thumb": f"data:image/png;base64,{B64}"},
    }
    native = await router(tmp_path).mcp(result, **NATIVE, trace=False)
    assert len(native.images) == 1 and "[image 1 attached" in native.text
    assert B64 not in native.text and "structuredContent" not in native.to_mcp()
    line = next(x for x in native.text.split("\n") if x.startswith("structured content: "))
    path = native.media_paths[0]
    assert json.loads(line.removeprefix("structured content: ")) == {
        "shot": {"data": f"MEDIA:{path}", "mimeType": "image/png"}
    }
    assert native.meta == {"example.com/thumb": f"MEDIA:{path}"}
    text = await router(tmp_path).mcp(result, **TEXT, trace=False)
    assert text.images == () and B64 not in text.text and find_inline(text.structured_content) == []


async def test_a_data_url_in_prose_is_an_image(tmp_path: Path) -> None:
    result = {"content": [{"type": "text", "text": f"see ![chart](data:image/png;base64,{B64})"}]}
    routed = await router(tmp_path).mcp(result, **NATIVE, trace=False)
    lines = routed.text.split("\n")
    assert lines[0] == "see ![chart]([image 1])" and lines[1].startswith("MEDIA:")
    assert len(routed.images) == 1 and B64 not in routed.text


async def test_a_text_of_nothing_but_base64_is_an_image(tmp_path: Path) -> None:
    wrapped = "\n".join(B64[i : i + 76] for i in range(0, len(B64), 76))  # as MIME writes it
    long_text = "t" * 100_000  # base64's alphabet, but no image: stays text
    result = {"content": [{"type": "text", "text": wrapped}, {"type": "text", "text": long_text}]}
    routed = await router(tmp_path).mcp(result, **TEXT, trace=False)
    lines = routed.text.split("\n")
    assert lines[0] == f"MEDIA:{routed.media_paths[0]}" and lines[1] == long_text
    assert B64[:76] not in routed.text


async def test_an_attached_image_is_a_path_in_the_structured_copy_not_base64(
    tmp_path: Path,
) -> None:
    """Regression (issue 36): the vision lane's structured copy carried the fitted image as
    base64, which a client that hands the model `structuredContent` gave it as text. The
    pixels are in the content, once, with the whole budget."""
    buffer = io.BytesIO()
    screenshot(1600, 1000, 1).save(buffer, "PNG")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    item = {"type": "image", "data": data, "mimeType": "image/png"}
    result = {"content": [item], "structuredContent": {"content": [item]}}
    routed = await router(tmp_path).mcp(
        result, **NATIVE, image_budget=200_000, output_schema={"type": "object"}, trace=False
    )
    (image,) = routed.images
    assert 100_000 < len(image.base64) <= 200_000  # one copy sent as pixels, not two
    structured = routed.to_mcp()["structuredContent"]
    assert structured["content"][0]["data"] == f"MEDIA:{routed.media_paths[0]}"
    assert not find_inline(structured) and image.base64[:200] not in json.dumps(structured)


@pytest.mark.parametrize("user_only", ["pass", "reference", "withhold"])
async def test_user_only_content_follows_the_policy(tmp_path: Path, user_only: str) -> None:
    result = {
        "content": [
            {"type": "text", "text": "for the model"},
            {"type": "text", "text": "for you", "annotations": {"audience": ["user"]}},
            {"type": "image", "data": B64, "mimeType": "image/png", "annotations": {
                "audience": ["user"], "priority": 0.5}},
        ],
        "structuredContent": {"preview": {"data": B64, "mimeType": "image/png"}},
    }  # fmt: skip
    routed = await router(tmp_path, user_only).mcp(
        result, **TEXT, output_schema={"type": "object"}, trace=False
    )
    passed = [block["type"] for block in routed.client.passed]
    preview = routed.to_mcp()["structuredContent"]["preview"]["data"]
    if user_only == "withhold":
        assert passed == [] and "left out" in routed.text
    else:
        assert passed == ["text", "image"]
        assert routed.client.passed[1]["annotations"] == {"audience": ["user"], "priority": 0.5}
    if user_only == "reference":
        assert routed.media_paths and f"MEDIA:{routed.media_paths[0]}" in routed.text
        assert preview == f"MEDIA:{routed.media_paths[0]}"
    else:
        assert routed.media_paths == () and "MEDIA:" not in routed.text
        assert preview == "[image 1: for the user only (audience)]"
    assert "for you" not in routed.text
    CallToolResult.model_validate(routed.to_mcp())


async def test_notes_name_no_tool_when_there_is_none(tmp_path: Path) -> None:
    result = {"content": [{"type": "image", "data": B64, "mimeType": "image/png"}]}
    default = await router(tmp_path).mcp(result, **TEXT, trace=False)
    assert "call vision_analyze with its MEDIA: path" in default.text
    none = await router(tmp_path, image_tool=None).mcp(result, **TEXT, trace=False)
    assert none.text.endswith("[1 image(s) kept out of the conversation (text lane)]")


async def test_audio_passes_as_it_came(tmp_path: Path) -> None:
    audio = {
        "type": "audio",
        "data": base64.b64encode(b"RIFF0000WAVE").decode(),
        "mimeType": "audio/wav",
    }
    routed = await router(tmp_path).mcp({"content": [audio]}, **NATIVE, trace=False)
    assert routed.to_mcp()["content"][1] == audio
    assert "[audio (audio/wav): passed on as it came" in routed.text


async def test_a_declared_schema_is_checked(tmp_path: Path) -> None:
    schema = {"type": "object", "required": ["temp"], "properties": {"temp": {"type": "number"}}}
    missing = await router(tmp_path).mcp(
        {"content": [{"type": "text", "text": "14"}]}, **TEXT, output_schema=schema, trace=False
    )
    assert missing.client.schema_problem is not None
    assert missing.record["execution"]["structured_content"]["valid"] is False
    wrong = await router(tmp_path).mcp(
        {"content": [], "structuredContent": {"temp": "warm"}}, **TEXT, output_schema=schema
    )
    assert wrong.client.schema_problem == "at `/temp`: a string where the schema wants `number`"
