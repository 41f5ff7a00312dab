"""Records that say what was sent: the record is written after the payload guard, the string
API returns what a string caller gets, and a description comes before the tool's own text."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _routing_helpers import DESCRIPTION, VisionEndpoint, endpoint_backend
from mcp.types import CallToolResult, ImageContent, TextContent

from visiongate.adapters._router import Router
from visiongate.adapters.mcp.example_server import tile_png
from visiongate.adapters.payloads import API_NAMES
from visiongate.adapters.sources import _lane
from visiongate.engine import Gate
from visiongate.engine.facts.registry._registry import ProviderRegistry

ROOT = Path(__file__).parent.parent
BUNDLED_REGISTRY = (ROOT / "policies" / "providers.yaml").read_text("utf-8")
NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def result_with(count: int, text: str = "three tiles") -> CallToolResult:
    images = [
        ImageContent(
            type="image",
            data=base64.b64encode(tile_png(index)).decode("ascii"),
            mime_type="image/png",
        )
        for index in range(1, count + 1)
    ]
    return CallToolResult(content=[TextContent(type="text", text=text), *images])


def per_request(text: str, count: int, *apis: str) -> ProviderRegistry:
    """The bundled registry, but `apis` (default: every shape) take at most `count` images per
    request (the registry's `apis` overrides of the shapes' own limits)."""
    overrides = "".join(
        f"  {api}: {{max_images_per_request: {count}}}\n" for api in apis or API_NAMES
    )
    return ProviderRegistry.from_text(f"{text}\napis:\n{overrides}", "providers.yaml")


def two_per_request(text: str) -> ProviderRegistry:
    """The bundled registry, but every API takes at most two images per request."""
    return per_request(text, 2)


class Sink:
    """A trace sink that keeps every record it is given."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def __call__(self, record: dict[str, Any]) -> None:
        self.records.append(json.loads(json.dumps(record)))


def router_for(
    tmp_path: Path,
    config: dict[str, Any],
    sink: Sink,
    *,
    registry: ProviderRegistry | None = None,
    policy: str | Path | None = None,
    vision: Any = None,
) -> Router:
    gate = Gate.load(policy, config, registry=registry, trace=sink, routes=tmp_path / "routes.json")
    return Router(gate, cache=tmp_path / "cache", vision=vision)


def declared(api: str) -> dict[str, Any]:
    """A config in native mode whose provider `p-<api>` is declared with that API shape."""
    return {
        "agent": {"image_input_mode": "native"},
        "providers": {f"p-{api}": {"tool_result_images": True, "api": api}},
    }


@pytest.mark.parametrize("api", API_NAMES)
def test_record_and_payload_agree_on_every_shape(api: str, tmp_path: Path) -> None:
    sink = Sink()
    router = router_for(tmp_path, declared(api), sink, registry=two_per_request(BUNDLED_REGISTRY))
    routed = asyncio.run(
        router.mcp(result_with(3), provider=f"p-{api}", model="m", tool_name="screenshot")
    )
    payload = router.payload(routed)
    [record] = sink.records
    execution = record["execution"]
    assert (payload.api, execution["api"]) == (api, api)
    assert len(execution["attached"]) == payload.images_sent == len(routed.images) == 2
    assert payload.withheld == ()
    guard = [item for item in execution["refused"] if item["reason"].startswith("payload guard")]
    assert [item["index"] for item in guard] == [3]
    assert "the api takes at most 2 images" in guard[0]["reason"]
    assert "[image 3 not attached: payload guard: the api takes at most 2 images]" in routed.text
    encoded = json.dumps(payload.as_json())
    sent = [image.base64 for image in routed.images]
    assert all(data in encoded for data in sent)


def _native_everywhere(tmp_path: Path) -> Path:
    policy = tmp_path / "all-native.yaml"
    policy.write_text(
        "policy: all-native\nversion: '1'\ndescription: pixels everywhere, even where refused\n"
        "hit_policy: unique\ndefault: text\nrules:\n"
        "  - {id: all-native, lane: native, reason: every cell gets pixels}\n"
    )
    return policy


def test_a_route_that_refuses_is_never_recorded_as_attached_nor_processed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_image_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the image stage ran for a route the guard refuses")

    monkeypatch.setattr(_lane, "process_images_async", no_image_work)
    sink = Sink()
    router = router_for(tmp_path, {}, sink, policy=_native_everywhere(tmp_path))
    routed = asyncio.run(router.mcp(result_with(2), provider="deepseek", model="deepseek-chat"))
    [record] = sink.records
    assert record["lane"] == "native" and record["facts"]["path"] == "refuses"
    assert record["execution"]["attached"] == [] and routed.images == ()
    reasons = [item["reason"] for item in record["execution"]["refused"]]
    assert reasons and all(r.startswith("payload guard: the route refuses") for r in reasons)
    assert router.payload(routed).images_sent == 0


def test_rendering_another_shape_that_withholds_more_amends_the_record(tmp_path: Path) -> None:
    registry = per_request(BUNDLED_REGISTRY, 1, "bedrock")
    sink = Sink()
    router = router_for(tmp_path, {}, sink, registry=registry)
    routed = asyncio.run(router.mcp(result_with(3), **NATIVE))
    assert len(sink.records[0]["execution"]["attached"]) == 3
    payload = router.payload(routed, "bedrock")
    assert payload.images_sent == 1
    first, amended = sink.records
    assert amended["decision_id"] == first["decision_id"]
    assert len(amended["execution"]["attached"]) == payload.images_sent
    assert amended["execution"]["api"] == "bedrock"
    assert "withheld 2 image(s)" in amended["amended"]
    router.payload(routed)  # its own shape withholds nothing: no further record
    assert len(sink.records) == 2


def test_mcp_text_returns_what_a_string_caller_gets_and_writes_one_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_image_work(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("mcp_text fitted images a string cannot carry")

    monkeypatch.setattr(_lane, "process_images_async", no_image_work)
    sink = Sink()
    router = router_for(tmp_path, {}, sink)
    text = asyncio.run(router.mcp_text(result_with(2), **NATIVE))
    [record] = sink.records
    assert record["lane"] == "native"
    assert record["execution"]["delivery"] == "string"
    assert record["execution"]["action"] == "reference"
    assert record["execution"]["attached"] == []
    assert not re.search(r"\[image \d+ attached:", text) and "data:image" not in text
    assert text.count("MEDIA:") >= 2
    assert "[image 1 not attached: this caller takes text only" in text


def test_mcp_text_in_the_describe_lane_gives_the_descriptions(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    sink = Sink()
    config = {"agent": {"image_input_mode": "text"}}
    router = router_for(
        tmp_path,
        config,
        sink,
        policy="examples/describe-mcp",
        vision=endpoint_backend(endpoint),
    )
    text = asyncio.run(router.mcp_text(result_with(1, "one tile"), **NATIVE))
    [record] = sink.records
    assert DESCRIPTION in text
    assert record["execution"]["action"] == "describe"
    assert record["execution"]["described"][0]["ok"] is True


def test_a_description_comes_before_the_tool_text_naming_its_image(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    sink = Sink()
    router = router_for(
        tmp_path,
        {"agent": {"image_input_mode": "text"}},
        sink,
        policy="examples/describe-mcp",
        vision=endpoint_backend(endpoint),
    )
    routed = asyncio.run(router.mcp(result_with(1, "the tool's own words"), **NATIVE))
    lines = routed.text.splitlines()
    (path,) = routed.media_paths
    assert lines[0] == f"[description of image 1 ({path}), not the tool's own output:]"
    end = lines.index("[end of the description of image 1]")
    assert any(DESCRIPTION in line for line in lines[1:end])
    assert lines.index("the tool's own words") > end


def test_a_screenshot_description_comes_before_the_tool_text(
    tmp_path: Path, endpoint: VisionEndpoint
) -> None:
    sink = Sink()
    router = router_for(
        tmp_path, {"agent": {"image_input_mode": "text"}}, sink, vision=endpoint_backend(endpoint)
    )
    routed = asyncio.run(
        router.screenshot(
            tile_png(2), source="browser", path="/tmp/b/shot.png", text="Page: Example", **NATIVE
        )
    )
    lines = routed.text.splitlines()
    assert (
        lines[0] == "[description of the screenshot (/tmp/b/shot.png), not the tool's own output:]"
    )
    end = lines.index("[end of the description of the screenshot]")
    assert lines[end + 1 : end + 3] == ["Page: Example", "MEDIA:/tmp/b/shot.png"]


def test_audit_reads_records_of_unverified_routes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from visiongate.cli import main

    sink = Sink()
    gate = Gate.load(trace=sink, routes=False)
    gate.decide("openrouter", "anthropic/claude-sonnet-4.5")
    gate.decide_facts("auto", "unknown", "set", "unverified")
    trace = tmp_path / "decisions.jsonl"
    trace.write_text("".join(json.dumps(record) + "\n" for record in sink.records))
    assert main(["audit", str(trace), "--json"]) == 0  # 1 when a line is malformed
    capsys.readouterr()
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["facts"]["path"] for line in lines] == ["unverified", "unverified"]
