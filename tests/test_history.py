"""A history that stays bounded: 50 screenshot turns in every API shape, through the real router.

Each turn is an assistant tool call and the routed screenshot rendered in the shape; before
each request the agent calls `Router.bound_history` on the whole history, as the README says.
The test prints what the last request carries before and after, per shape.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _image_samples import screenshot
from _routing_helpers import make_router

from visiongate.adapters import Router
from visiongate.adapters._history import bound_history
from visiongate.adapters.payloads._render import API_NAMES
from visiongate.engine import Gate

TURNS = 50
KEEP = 10  # the default policy's `execution.keep_recent_images`
CHUNK = 5  # half of it


@functools.cache
def png(seed: int) -> bytes:
    buffer = io.BytesIO()
    screenshot(1280, 800, seed=seed).save(buffer, "PNG")
    return buffer.getvalue()


class Screens(Sequence[bytes]):
    """The `TURNS` screenshots, each drawn when a test first asks for it: the fifty-turn tests
    use all of them, the others a dozen (drawing all fifty took 2.3 s of CPU)."""

    def __len__(self) -> int:
        return TURNS

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [png(seed) for seed in range(TURNS)[index]]
        return png(range(TURNS)[index])


@pytest.fixture(scope="module")
def screens() -> Screens:
    return Screens()


def assistant_call(api: str, call_id: str) -> dict[str, Any]:
    """The assistant's `screenshot` tool call in each shape."""
    name = "screenshot"
    return {
        "anthropic": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": {}}],
        },
        "openai-chat": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        },
        "openai-responses": {
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "arguments": "{}",
        },
        "gemini": {
            "role": "model",
            "parts": [{"functionCall": {"id": call_id, "name": name, "args": {}}}],
        },
        "bedrock": {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": call_id, "name": name, "input": {}}}],
        },
        "ollama": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": name, "arguments": {}}}],
        },
    }[api]


def images_in(request: list[dict[str, Any]]) -> int:
    """Images a request carries, counted on its JSON (PNG base64 starts `iVBOR`)."""
    return json.dumps(request).count("iVBOR")


async def screenshot_turn(router: Router, api: str, data: bytes, turn: int) -> list[Any]:
    routed = await router.screenshot(
        data, source="computer_use", provider="anthropic", model="claude-sonnet-4-5", api=api
    )
    call_id = f"call_{turn}"
    payload = router.render_turn([(routed, call_id, "screenshot")], api)
    assert payload.images_sent == 1
    return [assistant_call(api, call_id), *payload.messages]


def route_turns(router: Router, api: str, screens: Sequence[bytes]) -> list[list[Any]]:
    """Each screenshot routed and rendered as one turn (call ids `call_1`, ...)."""

    async def all_turns() -> list[list[Any]]:
        return [
            await screenshot_turn(router, api, data, turn)
            for turn, data in enumerate(screens, start=1)
        ]

    return asyncio.run(all_turns())


@pytest.mark.slow  # fifty screenshot turns through the real router
@pytest.mark.parametrize("api", API_NAMES)
def test_fifty_screenshot_turns_stay_bounded_in_every_shape(
    api: str, screens: Sequence[bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    router = make_router(tmp_path)
    history: list[dict[str, Any]] = [{"role": "user", "content": "fix the build"}]
    previous: list[dict[str, Any]] = []
    breaks = 0
    sizes: list[str] = []
    for turn, messages in enumerate(route_turns(router, api, screens), start=1):
        history += messages
        request = router.bound_history(history, api).messages
        assert images_in(request) <= KEEP
        if request[: len(previous)] != previous:
            breaks += 1  # the cached prefix of the last request no longer matches
        previous = request
        if turn % 10 == 0:
            kib = (len(json.dumps(history)) // 1024, len(json.dumps(request)) // 1024)
            sizes.append(f"{turn}: {kib[0]:,}->{kib[1]:,}")
    assert images_in(history) == TURNS
    assert images_in(request) == KEEP - CHUNK + 1 + (TURNS - KEEP - 1) % CHUNK
    # Chunks of 5 from the 11th image on: the prefix changes on 8 of 50 requests, not 40.
    assert breaks == -(-(TURNS - KEEP) // CHUNK)
    before, after = len(json.dumps(history)), len(json.dumps(request))
    with capsys.disabled():
        print(
            f"\n  {api:>16}: request {TURNS} carries {before:>10,} bytes unbounded, "
            f"{after:>9,} bounded ({images_in(request)} of {TURNS} images, "
            f"{before / after:.1f}x smaller; prefix changed on {breaks} of {TURNS} requests)"
            f"\n  {'':>16}  KiB per request, unbounded->bounded, at turn {'  '.join(sizes)}"
        )


def test_a_removed_image_becomes_its_media_path_and_a_note(
    screens: Sequence[bytes], tmp_path: Path
) -> None:
    router = make_router(tmp_path)
    history = [m for turn in route_turns(router, "anthropic", screens[1 : KEEP + 2]) for m in turn]
    bounded = router.bound_history(history, "anthropic")
    assert (bounded.images_before, bounded.removed, bounded.images_after) == (11, 5, 6)
    first = bounded.messages[1]["content"][0]["content"]
    notes = [block["text"] for block in first if block["type"] == "text"]
    note = notes[-1]
    assert note.startswith("[an older image was removed to keep requests small")
    path = note.splitlines()[-1].removeprefix("MEDIA:")
    assert Path(path).read_bytes() == screens[1]
    assert Path(path).parent == tmp_path


@pytest.mark.parametrize(
    ("image_tool", "call"),
    [
        ("vision_analyze", "; to see it again, call vision_analyze with its MEDIA: path]"),
        ("visiongate_view_image", "; to see it again, call visiongate_view_image with its"),
        (None, "are kept)]"),
    ],
)
def test_a_removal_note_names_the_tool_the_model_has(
    image_tool: str | None, call: str, screens: Sequence[bytes], tmp_path: Path
) -> None:
    # Regression: the note always said `vision_analyze`, a tool the proxy's model lacks.
    router = Router(Gate.load(), cache=tmp_path, image_tool=image_tool)
    turns = route_turns(router, "openai-chat", screens[1 : KEEP + 2])
    history = [message for turn in turns for message in turn]
    text = json.dumps(router.bound_history(history, "openai-chat").messages)
    assert call in text
    assert "MEDIA:" in text
    for other in {"vision_analyze", "visiongate_view_image"} - {image_tool}:
        assert f"call {other}" not in text


def test_max_calls_per_image_needs_no_seen_hashes(screens: Sequence[bytes], tmp_path: Path) -> None:
    # Regression (issue 15): only a caller that kept `seen_hashes` avoided re-attaching.
    router = make_router(tmp_path)
    history = [m for turn in route_turns(router, "openai-chat", [screens[0]] * 3) for m in turn]
    bounded = router.bound_history(history, "openai-chat")
    assert (bounded.images_after, bounded.repeated) == (1, 2)
    text = json.dumps(bounded.messages)
    assert text.count("already attached 1 time(s)") == 1
    assert text.count("already attached 2 time(s)") == 1


@pytest.mark.parametrize("api", API_NAMES)
def test_bounding_never_changes_the_input(
    api: str, screens: Sequence[bytes], tmp_path: Path
) -> None:
    router = make_router(tmp_path)
    history = [m for turn in route_turns(router, api, screens[1:4]) for m in turn]
    kept = copy.deepcopy(history)
    bounded = bound_history(history, api, keep_recent_images=1, chunk=1, cache=router.cache)
    assert history == kept
    assert images_in(bounded.messages) == 1


def test_bedrock_raw_bytes_are_bounded_too(screens: Sequence[bytes], tmp_path: Path) -> None:
    router = make_router(tmp_path)
    routed = asyncio.run(
        router.screenshot(
            screens[0], source="computer_use", provider="anthropic", model="claude-sonnet-4-5",
            api="bedrock",
        )
    )  # fmt: skip
    raw = router.render_turn([(routed, "c1")], "bedrock").boto3_messages()
    bounded = bound_history(raw * 3, "bedrock", keep_recent_images=2, chunk=1, cache=router.cache)
    assert bounded.images_after == 2
    note = bounded.messages[0]["content"][0]["toolResult"]["content"][1]["text"]
    assert "MEDIA:" in note


def test_history_limits_come_from_the_policy(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    text = Path(Gate.load().compiled.policy.path).read_text(encoding="utf-8")
    policy.write_text(
        text.replace("keep_recent_images: 10", "keep_recent_images: 3"), encoding="utf-8"
    )
    assert Gate.load(str(policy)).compiled.policy.execution.keep_recent_images == 3
    assert Gate.load().compiled.policy.execution.max_calls_per_image == 1


def test_limits_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="`keep_recent_images` must be at least 1"):
        bound_history([], "anthropic", keep_recent_images=0)
    with pytest.raises(ValueError, match="unknown api `soap`"):
        bound_history([], "soap")
