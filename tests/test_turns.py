"""Golden turns: the results of one assistant turn (1, 2 and 3 tool calls, mixing images and
errors) rendered together for each API shape, plus the rules each API enforces on a turn.

Golden files: `tests/data/turns/<api>-<n>.json`; regenerate with
`VISIONGATE_REGEN_GOLDEN=1 pytest tests/test_turns.py` and review the diff.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
import test_payloads as samples

from visiongate.adapters import render_turn
from visiongate.adapters._routed import RoutedResult
from visiongate.adapters.payloads._render import API_NAMES, render_payload

GOLDEN = samples.GOLDEN.parent / "turns"


def turn(api: str, size: int) -> list[tuple[RoutedResult, str, str]]:
    """1: a screenshot with two images; 2: plus a failed call; 3: plus a text-lane result."""
    calls = [
        (samples.routed(api, "native"), "call_1", "gallery"),
        (replace(samples.routed(api, "error"), tool_name="click"), "call_2", "click"),
        (replace(samples.routed(api, "text"), tool_name="screenshot"), "call_3", "screenshot"),
    ]
    return calls[:size]


CASES = [(api, size) for api in API_NAMES for size in (1, 2, 3)]


@pytest.mark.parametrize(("api", "size"), CASES, ids=[f"{a}-{n}" for a, n in CASES])
def test_golden_turn(api: str, size: int) -> None:
    payload = render_turn(turn(api, size))
    actual = payload.as_json()
    path = GOLDEN / f"{api}-{size}.json"
    if samples.REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == actual
    assert payload.images_sent == 2


@pytest.mark.parametrize("size", [1, 2, 3])
def test_anthropic_turn_is_one_user_message_of_tool_results(size: int) -> None:
    (message,) = render_turn(turn("anthropic", size)).messages
    assert message["role"] == "user"
    blocks = message["content"]
    assert [block["tool_use_id"] for block in blocks] == [f"call_{i + 1}" for i in range(size)]
    assert all(block["type"] == "tool_result" for block in blocks)
    assert [block.get("is_error", False) for block in blocks] == [False, True, False][:size]


@pytest.mark.parametrize("size", [1, 2, 3])
def test_openai_chat_answers_every_call_before_any_user_message(size: int) -> None:
    messages = render_turn(turn("openai-chat", size)).messages
    roles = [message["role"] for message in messages]
    assert roles == ["tool"] * size + ["user"]
    assert [message["tool_call_id"] for message in messages[:size]] == [
        f"call_{i + 1}" for i in range(size)
    ]
    kinds = [part["type"] for part in messages[-1]["content"]]
    assert kinds == ["text", "image_url", "image_url"]


def test_one_result_at_a_time_breaks_openai_chat_which_render_turn_fixes() -> None:
    # Regression (issue 15): rendered one by one, a turn of two results with images became
    # `tool, user, tool, user`, which Chat Completions rejects.
    both = [samples.routed("openai-chat", "native"), samples.routed("openai-chat", "native")]
    separate = [
        message["role"]
        for i, result in enumerate(both)
        for message in render_payload(result, tool_call_id=f"c{i}").messages
    ]
    assert separate == ["tool", "user", "tool", "user"]
    together = render_turn([(result, f"c{i}") for i, result in enumerate(both)]).messages
    assert [message["role"] for message in together] == ["tool", "tool", "user"]
    assert [part["type"] for part in together[-1]["content"]].count("image_url") == 4


@pytest.mark.parametrize("size", [1, 2, 3])
def test_gemini_turn_is_one_content_and_names_come_from_the_calls(size: int) -> None:
    (content,) = render_turn(turn("gemini", size)).messages
    responses = [part["functionResponse"] for part in content["parts"]]
    assert [(r["id"], r["name"]) for r in responses] == [
        ("call_1", "gallery"),
        ("call_2", "click"),
        ("call_3", "screenshot"),
    ][:size]
    assert "mcp" not in json.dumps(responses)


def test_gemini_without_a_function_name_is_refused_not_guessed() -> None:
    # Regression (issue 15): the name fell back to the source, a silent `"mcp"`.
    nameless = replace(samples.routed("gemini", "native"), tool_name=None)
    with pytest.raises(ValueError, match="`gemini` needs the function name of call `call_9`"):
        render_turn([(nameless, "call_9")])
    named = render_turn([(nameless, "call_9", "screenshot")]).messages
    assert named[0]["parts"][0]["functionResponse"]["name"] == "screenshot"


@pytest.mark.parametrize("size", [1, 2, 3])
def test_bedrock_turn_is_one_user_message_with_both_byte_forms(size: int) -> None:
    payload = render_turn(turn("bedrock", size))
    (message,) = payload.messages
    assert [block["toolResult"]["toolUseId"] for block in message["content"]] == [
        f"call_{i + 1}" for i in range(size)
    ]
    json_form = _bedrock_image_bytes(payload.messages)
    raw_form = _bedrock_image_bytes(payload.boto3_messages())
    assert all(isinstance(value, str) for value in json_form)
    assert all(isinstance(value, bytes) for value in raw_form)
    assert [base64.b64decode(value) for value in json_form] == raw_form
    assert raw_form == [image.data for image in samples.IMAGES]


def test_raw_bytes_are_a_bedrock_form_only() -> None:
    with pytest.raises(ValueError, match="raw image bytes are a `bedrock` form"):
        render_turn(turn("anthropic", 1)).boto3_messages()


@pytest.mark.parametrize("api", ["openai-responses", "ollama"])
def test_shapes_of_independent_items_keep_one_item_per_call(api: str) -> None:
    messages = render_turn(turn(api, 3)).messages
    assert len(messages) == 3


def test_a_turn_refuses_a_repeated_call_id_and_an_empty_turn() -> None:
    result = samples.routed("anthropic", "native")
    with pytest.raises(ValueError, match="call id `a` appears twice"):
        render_turn([(result, "a"), (result, "a")])
    with pytest.raises(ValueError, match="at least one tool result"):
        render_turn([])


def _bedrock_image_bytes(messages: Any) -> list[Any]:
    return [
        item["image"]["source"]["bytes"]
        for message in messages
        for block in message["content"]
        for item in block["toolResult"]["content"]
        if "image" in item
    ]
