"""Fuzzing the edge: whatever arrives as a tool result, the reader either gives the wire model
or one clean `InvalidToolResult` line, and the sanitizer takes every result it gives."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.sanitize._mcp import sanitize_call_tool_result
from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.wire._edge import InvalidToolResult, read_tool_result

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = ["type", "text", "data", "mimeType", "mime_type", "uri", "name", "blob", "resource",
          "annotations", "audience", "_meta", "title", "description", "size", "icons"]  # fmt: skip
PYTHON_TYPES = re.compile(r"\b(NoneType|dict|list|tuple|str|int|float|bool|bytes)\b")
KINDS = st.sampled_from(["text", "image", "audio", "resource", "resource_link", "other"])


@st.composite
def near_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """A content block of a real type with a few fields of any JSON value."""
    block: dict[str, Any] = {"type": draw(KINDS)}
    for key in draw(st.lists(st.sampled_from(FIELDS), max_size=5)):
        block[key] = draw(JSON | st.text(max_size=8) | st.fixed_dictionaries({"uri": JSON}))
    return block


RESULTS = st.fixed_dictionaries(
    {"content": st.lists(near_blocks() | JSON, max_size=4)},
    optional={"isError": JSON, "structuredContent": JSON, "_meta": JSON},
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(RESULTS, JSON))
def test_the_edge_gives_the_model_or_one_clean_line(value: Any) -> None:
    try:
        result = read_tool_result(value)
    except InvalidToolResult as error:
        message = str(error)
        assert message.startswith("invalid tool result: ")
        assert "\n" not in message and not PYTHON_TYPES.search(message)
        return
    sanitize_call_tool_result(result, Sanitizer())
    wire = result.to_wire()
    assert read_tool_result(wire).to_wire() == wire
