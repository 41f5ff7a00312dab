"""The API shapes: one module each, one list, and every place that needs the names reads it.

Also the message rules a provider adds to a shape (Mistral's `user` after `tool`), and the
record written when rendering withholds images, whichever rendering function is called.
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import itertools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import test_payloads as samples
from mcp.types import CallToolResult, ImageContent, TextContent

from visiongate.adapters import Router, render_payload, render_turn
from visiongate.adapters._history_slots import _FINDERS
from visiongate.adapters.mcp.example_server import tile_png
from visiongate.adapters.probe import PROBE_APIS
from visiongate.cli import probe as probe_cli
from visiongate.cli import route as route_cli
from visiongate.engine import SOURCES, Gate
from visiongate.engine.facts.registry._registry import ProviderRegistry
from visiongate.engine.facts.registry._schema import API_NAMES as REGISTRY_API_NAMES
from visiongate.kernel import shapes

REGISTRY = (Path(__file__).parent.parent / "policies" / "providers.yaml").read_text("utf-8")
MODULES = ("anthropic", "openai_responses", "openai_chat", "gemini", "bedrock", "ollama")


def test_each_shape_is_one_module_and_the_list_is_theirs() -> None:
    found = [importlib.import_module(f"visiongate.kernel.shapes.{name}").SHAPE for name in MODULES]
    assert list(shapes.SHAPES) == found
    assert tuple(shape.name for shape in found) == shapes.API_NAMES
    assert list(shapes.API_NAMES) == [name.replace("_", "-") for name in MODULES]


def test_every_place_that_names_the_shapes_reads_the_one_list() -> None:
    # The command line used to keep copies, "checked by tests" that did not exist.
    assert route_cli.API_NAMES is shapes.API_NAMES
    assert probe_cli.PROBE_APIS is shapes.PROBE_APIS is PROBE_APIS
    assert REGISTRY_API_NAMES is shapes.API_NAMES
    assert tuple(_FINDERS) == shapes.API_NAMES
    assert route_cli.SOURCES == SOURCES


def test_the_registry_takes_each_shapes_own_limits_unless_it_overrides_them() -> None:
    bundled = ProviderRegistry.bundled()
    assert {name: bundled.apis[name] for name in shapes.API_NAMES} == {
        shape.name: shape.limits for shape in shapes.SHAPES
    }
    changed = ProviderRegistry.from_text(REGISTRY + "\napis:\n  gemini: {max_edge_px: 1024}\n")
    assert changed.apis["gemini"].max_edge_px == 1024
    assert changed.apis["gemini"].formats == shapes.shape_named("gemini").limits.formats


def test_an_unknown_shape_name_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="unknown api `openai`: expected one of anthropic"):
        shapes.shape_named("openai")


# -- message rules -----------------------------------------------------------------------------

MISTRAL_ROUTES = [
    ("mistral", "pixtral-large-latest"),
    ("mistral", "mistral-large-latest"),
    ("openrouter", "mistralai/pixtral-large-2411"),
    ("nvidia", "mistralai/mistral-small-4-119b-2603"),
]


def mistral_route(provider: str, model: str) -> Any:
    route = ProviderRegistry.bundled().route(provider, model)
    # Whatever the registry's verdict, the message rule is what rendering must follow.
    return replace(route, accepts_tool_images=True, evidence="documented", api="openai-chat")


def roles(messages: tuple[dict[str, Any], ...]) -> list[str]:
    return [message.get("role", "") for message in messages]


def no_user_right_after_tool(messages: tuple[dict[str, Any], ...]) -> bool:
    names = roles(messages)
    return not any(a == "tool" and b == "user" for a, b in itertools.pairwise(names))


@pytest.mark.parametrize(("provider", "model"), MISTRAL_ROUTES)
def test_the_registry_records_mistrals_message_order(provider: str, model: str) -> None:
    route = ProviderRegistry.bundled().route(provider, model)
    assert route.user_after_tool == "bridge"
    assert "invalid_request_message_order" in route.message_rule or "any host" in route.message_rule


@pytest.mark.parametrize(("provider", "model"), MISTRAL_ROUTES)
@pytest.mark.parametrize("size", [1, 2, 3])
def test_mistral_payloads_never_put_a_user_message_right_after_a_tool_message(
    provider: str, model: str, size: int
) -> None:
    route = mistral_route(provider, model)
    calls = [
        (replace(samples.routed("openai-chat", "native"), route=route), f"c{index}", "shot")
        for index in range(size)
    ]
    turn = render_turn(calls)
    assert no_user_right_after_tool(turn.messages), roles(turn.messages)
    assert roles(turn.messages) == ["tool"] * size + ["assistant", "user"]
    assert turn.messages[size]["content"] == shapes.BRIDGE_TEXT
    assert turn.images_sent == 2 * size
    for result, call_id, name in calls:
        one = render_payload(result, tool_call_id=call_id, tool_name=name)
        assert no_user_right_after_tool(one.messages)
        assert roles(one.messages) == ["tool", "assistant", "user"]


def test_other_openai_chat_routes_keep_the_order_they_had() -> None:
    turn = render_turn([(samples.routed("openai-chat", "native"), "c1", "shot")])
    assert roles(turn.messages) == ["tool", "user"]


def test_a_route_with_no_valid_order_for_its_shape_refuses_with_the_rule_as_evidence() -> None:
    text = REGISTRY.replace(
        "  - provider: [mistral]\n    user_after_tool: bridge",
        "  - provider: [mistral]\n    user_after_tool: refuses",
    )
    registry = ProviderRegistry.from_text(text, "providers.yaml")
    route = registry.route("mistral", "pixtral-large-latest")
    assert route.path == "refuses"
    assert "takes no user message after a tool message" in route.reason
    assert route.evidence == "field" and route.where.startswith("providers.yaml:")


# -- the record, whichever API renders -------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def __call__(self, record: dict[str, Any]) -> None:
        self.records.append(json.loads(json.dumps(record)))


def three_tiles() -> CallToolResult:
    images = [
        ImageContent(
            type="image", data=base64.b64encode(tile_png(i)).decode(), mime_type="image/png"
        )
        for i in (1, 2, 3)
    ]
    return CallToolResult(content=[TextContent(type="text", text="tiles"), *images])


def one_per_bedrock_request() -> ProviderRegistry:
    return ProviderRegistry.from_text(
        REGISTRY + "\napis:\n  bedrock: {max_images_per_request: 1}\n", "providers.yaml"
    )


def routed_for_anthropic(tmp_path: Path, sink: Sink, *, trace: bool = True) -> Any:
    gate = Gate.load(registry=one_per_bedrock_request(), trace=sink, routes=False)
    router = Router(gate, cache=tmp_path / "cache")
    return asyncio.run(
        router.mcp(three_tiles(), provider="anthropic", model="claude-sonnet-4-5", trace=trace)
    )


@pytest.mark.parametrize("how", ["render_payload", "render_turn"])
def test_free_render_functions_amend_the_record_when_they_withhold_images(
    how: str, tmp_path: Path
) -> None:
    # Regression (issue 29): only `Router.payload` amended the record; the free functions
    # rendered for Bedrock (one image per request) while the trace still said three attached.
    sink = Sink()
    routed = routed_for_anthropic(tmp_path, sink)
    assert len(sink.records[0]["execution"]["attached"]) == 3
    registry = one_per_bedrock_request()
    if how == "render_payload":
        payload = render_payload(routed, "bedrock", registry=registry)
    else:
        payload = render_turn([(routed, "c1")], "bedrock", registry=registry)
    assert payload.images_sent == 1
    first, amended = sink.records
    assert amended["decision_id"] == first["decision_id"]
    assert len(amended["execution"]["attached"]) == payload.images_sent
    assert [entry["reason"][:25] for entry in amended["execution"]["refused"]] == [
        "payload guard (bedrock): "
    ] * 2
    assert payload.records[0] == amended


def test_without_a_trace_the_amended_record_is_the_payloads_to_write(tmp_path: Path) -> None:
    sink = Sink()
    routed = routed_for_anthropic(tmp_path, sink, trace=False)
    assert sink.records == [] and routed.sink is None
    payload = render_payload(routed, "bedrock", registry=one_per_bedrock_request())
    assert sink.records == []
    [record] = payload.records
    assert len(record["execution"]["attached"]) == 1 and "amended" in record
    assert render_payload(routed).records == (routed.record,)  # its own shape: unchanged
