"""The corpora: legitimate text in many scripts passes every surface byte for byte; payloads of
every encoder leave nothing decodable; both are counted, in the trace record too."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from _invisible_payloads import (
    DATA,
    ENCODERS,
    INSTRUCTIONS,
    decodable,
    invisible_part,
    mixed,
)
from _routing_helpers import make_router
from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.adapters.proxy._surfaces import clean_error, clean_notification, clean_result
from visiongate.adapters.sanitize._invisible import channel_of
from visiongate.adapters.sanitize._listings import (
    sanitize_get_prompt_result,
    sanitize_list_prompts_result,
    sanitize_list_resources_result,
    sanitize_list_tools_result,
)
from visiongate.adapters.sanitize._mcp import sanitize_call_tool_result
from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.sanitize._text import REMOVED_KIND

LEGITIMATE: list[dict[str, str]] = yaml.safe_load(
    (DATA / "legitimate.yaml").read_text(encoding="utf-8")
)
EMOJI: list[tuple[str, str]] = [
    tuple(line.split("\t"))  # type: ignore[misc]
    for line in (DATA / "emoji-sequences.txt").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
]
TEXTS = [entry["text"] for entry in LEGITIMATE] + [" ".join(text for _, text in EMOJI)]
CARRIER = "Weather in London: sunny, 21°C. {} Have a nice day."


def _wire_surfaces(text: str) -> dict[str, Callable[[Sanitizer], Any]]:
    """One MCP message per surface the sanitizer covers, each holding `text` in its fields."""
    tool = {"name": "weather", "description": text, "inputSchema": {"type": "object"}}
    return {
        "tools/call": lambda s: sanitize_call_tool_result(
            {
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"summary": text, text: [text]},
                "_meta": {"com.example/note": text},
            },
            s,
        ),
        "tools/list": lambda s: sanitize_list_tools_result({"tools": [tool]}, s),
        "resources/list": lambda s: sanitize_list_resources_result(
            {"resources": [{"uri": "file:///a", "name": "a", "description": text}]}, s
        ),
        "prompts/list": lambda s: sanitize_list_prompts_result(
            {"prompts": [{"name": "p", "description": text}]}, s
        ),
        "prompts/get": lambda s: sanitize_get_prompt_result(
            {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}, s
        ),
        "initialize": lambda s: clean_result(
            "initialize", {"serverInfo": {"name": text, "version": "1"}, "instructions": text}, s
        ),
        "error": lambda s: clean_error({"code": -32000, "message": text, "data": text}, s),
        "log": lambda s: clean_notification(
            "notifications/message", {"level": "info", "data": text}, s
        ),
    }


def _strings(value: Any) -> list[str]:
    """Every string in a wire value (keys included), in order."""
    if isinstance(value, str):
        return [value]
    if hasattr(value, "__dataclass_fields__"):
        value = vars(value)
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in _strings(key) + _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("entry", LEGITIMATE, ids=[entry["name"] for entry in LEGITIMATE])
def test_legitimate_text_passes_as_it_is(entry: dict[str, str]) -> None:
    sanitizer = Sanitizer()
    assert sanitizer.text(entry["text"], "text") is entry["text"]
    kinds = sanitizer.counts().get("text", {})
    assert all(kind.endswith("_kept") for kind in kinds), kinds
    invisible = [char for char in entry["text"] if channel_of(char)]
    assert bool(kinds) == bool(invisible)


@pytest.mark.parametrize("kind", ["zwj", "keycap", "flag", "tag"])
def test_every_emoji_sequence_passes_as_it_is(kind: str) -> None:
    sequences = [text for found, text in EMOJI if found == kind]
    sanitizer = Sanitizer()
    changed = [text for text in sequences if sanitizer.text(text, "text") is not text]
    assert sequences and not changed
    assert all(k.endswith("_kept") for k in sanitizer.counts().get("text", {}))


@pytest.mark.parametrize("text", TEXTS, ids=[e["name"] for e in LEGITIMATE] + ["emoji"])
def test_legitimate_text_passes_every_surface(text: str) -> None:
    for surface, clean in _wire_surfaces(text).items():
        sanitizer = Sanitizer()
        cleaned = clean(sanitizer)
        assert text in _strings(cleaned), surface
        assert all(s == text or text not in s for s in _strings(cleaned)), surface
        counted = [kind for kinds in sanitizer.counts().values() for kind in kinds]
        assert all(kind.endswith("_kept") for kind in counted), surface
        assert bool(counted) == any(channel_of(char) for char in text), surface


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_encoders_round_trip(name: str) -> None:
    encode, decode = ENCODERS[name]
    for instruction in INSTRUCTIONS:
        assert decode(encode(instruction)) == instruction.encode(), instruction


def test_at_least_a_hundred_instructions() -> None:
    assert len(set(INSTRUCTIONS)) >= 100


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_payloads_leave_nothing_decodable(name: str) -> None:
    encode, _ = ENCODERS[name]
    for instruction in INSTRUCTIONS:
        sanitizer = Sanitizer()
        hidden = CARRIER.format(encode(instruction))
        cleaned = sanitizer.text(hidden, "text")
        assert decodable(cleaned) == {}, instruction
        assert sanitizer.counts()["text"], instruction
    # The carrier's own words survive.
    assert cleaned.startswith("Weather in London") and cleaned.endswith("nice day.")


def test_mixed_encodings_leave_nothing_decodable() -> None:
    for seed, instruction in enumerate(INSTRUCTIONS):
        encoded = mixed(instruction, seed)
        assert any(decodable(encoded).values())
        sanitizer = Sanitizer()
        cleaned = sanitizer.text(CARRIER.format(encoded), "text")
        assert decodable(cleaned) == {}
        removed = sum(sanitizer.counts()["text"].get(kind, 0) for kind in REMOVED_KIND.values())
        assert removed == sum(1 for char in encoded if channel_of(char))


@pytest.mark.parametrize("surface", list(_wire_surfaces("x")))
def test_payloads_leave_nothing_decodable_on_every_surface(surface: str) -> None:
    encoded = "".join(mixed(instruction, seed) for seed, instruction in enumerate(INSTRUCTIONS))
    sanitizer = Sanitizer()
    cleaned = _wire_surfaces(CARRIER.format(encoded))[surface](sanitizer)
    assert all(decodable(s) == {} for s in _strings(cleaned))
    assert sanitizer.counts()


def test_both_corpora_are_counted_in_the_trace_record(tmp_path: Path) -> None:
    router = make_router(tmp_path / "images")
    legit = LEGITIMATE[0]["text"]
    hidden = CARRIER.format(mixed(INSTRUCTIONS[0], 0))
    result = {
        "content": [{"type": "text", "text": legit}, {"type": "text", "text": hidden}],
        "structuredContent": {"note": hidden},
    }
    routed = asyncio.run(router.mcp(result, provider="anthropic", model="claude-sonnet-4-5"))
    counts = routed.record["sanitizer"]
    assert counts["text"]["zero_width_kept"] == legit.count("\u200c")
    assert sum(counts["structured_content"].values()) > 0
    assert legit in routed.text and decodable(routed.text.replace(legit, "")) == {}
    json.dumps(routed.record)


# Payload chunks: the invisible part of an encoded instruction, cut into pieces of two or more
# characters (one character alone can be a legitimate use: a single ZWNJ between two Persian
# letters is the very thing the scripts need). Trojan Source is left out: its payload is visible.
CHUNKS = st.builds(
    lambda name, index, start, size: _chunk(name, index, start, size),
    st.sampled_from([name for name in ENCODERS if name != "trojan_source"]),
    st.integers(0, len(INSTRUCTIONS) - 1),
    st.integers(0, 400),
    st.integers(2, 60),
)


def _chunk(name: str, index: int, start: int, size: int) -> str:
    hidden = invisible_part(ENCODERS[name][0](INSTRUCTIONS[index]))
    start = min(start, max(len(hidden) - 2, 0))
    return hidden[start : start + size]


def _between_visible(text: str) -> list[int]:
    """Positions with a visible character on each side (insertion points for a payload)."""
    return [i for i in range(len(text) + 1) if all(not channel_of(c) for c in text[i - 1 : i + 1])]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(TEXTS[:-1] + [text for _, text in EMOJI]), st.data())
def test_any_interleaving_of_payloads_comes_out_as_the_legitimate_text(
    legit: str, data: st.DataObject
) -> None:
    positions = _between_visible(legit)
    inserts = data.draw(st.lists(st.tuples(st.sampled_from(positions), CHUNKS), max_size=6))
    text = legit
    for position, chunk in sorted(inserts, reverse=True):
        text = text[:position] + chunk + text[position:]
    assert Sanitizer().text(text, "text") == legit
