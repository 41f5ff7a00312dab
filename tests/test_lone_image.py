"""`execution.native.lone_image`: a result's only image may take the turn's room (issue 34).

With `turn`, an image with no other left to attach in its result is fitted in the budget of
every free slot (`max_images` x `embed_target_bytes`), never past the route's own cap, the
client's cap on the result, or the pixel ceiling; two images still share one slot each, the
tiles of a tall capture keep one slot's budget each, and the record says which room a fit had.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import numpy as np
import pytest
from _image_samples import ALL_FORMATS, encode
from _routing_helpers import make_router
from PIL import Image
from test_policy_tall_images import BASE, NATIVE_KEYS, with_native

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_images
from visiongate.engine import NativeSettings, analyze_policy_text

SLOT = 262_144
slow = pytest.mark.slow  # fits 2560x1440 pages of noise, several times each
TURN = NativeSettings(lone_image="turn")


def busy_page(width: int = 2560, height: int = 1440, seed: int = 5) -> bytes:
    """Coloured noise with bands: no fit at the ceiling is small enough for one slot."""
    rng = np.random.default_rng(seed)
    noise = np.asarray((96, 100, 112), np.float32) + rng.normal(0, 40, (height, width, 3))
    noise[::48] = 250
    return encode(Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8)), "PNG")


@pytest.fixture(scope="module")
def page() -> bytes:
    return busy_page()


def target_for(native: NativeSettings, route_cap: int | None = None) -> ImageTarget:
    return ImageTarget.create(ALL_FORMATS, native, route_cap, None)


def only(
    native: NativeSettings,
    data: bytes,
    route_cap: int | None = None,
    result_budget: int | None = None,
) -> ProcessedImage:
    target = target_for(native, route_cap)
    batch = process_images([data], target, native, result_budget=result_budget)
    (image,) = batch.attached
    return image


@slow
def test_slot_is_the_default_and_a_lone_image_keeps_one_slots_budget(page: bytes) -> None:
    assert NativeSettings().lone_image == "slot"
    image = only(NativeSettings(), page)
    assert (image.room, image.budget_base64) == ("slot", SLOT)
    assert len(image.base64) <= SLOT


@slow
def test_turn_gives_a_lone_image_every_slots_budget(page: bytes) -> None:
    slot, turn = only(NativeSettings(), page), only(TURN, page)
    assert (turn.room, turn.budget_base64) == ("turn", 4 * SLOT)
    assert SLOT < len(turn.base64) <= 4 * SLOT
    assert max(turn.width, turn.height) <= 1568
    assert (turn.width, turn.quality or 100) > (slot.width, slot.quality or 100)


@slow
def test_two_images_still_share_one_slot_each(page: bytes) -> None:
    other = busy_page(seed=6)
    batch = process_images([page, other], target_for(TURN), TURN)
    assert [(image.room, image.budget_base64) for image in batch.attached] == [("slot", SLOT)] * 2
    assert all(len(image.base64) <= SLOT for image in batch.attached)


@slow
def test_the_last_image_left_gets_the_free_slots_budget(page: bytes) -> None:
    # The repeat of the first image waits for it (whether it is a duplicate depends on it),
    # so the first goes alone while another is still to come: one slot's budget; the last,
    # with three slots free, gets theirs.
    other = busy_page(seed=6)
    batch = process_images([page, page, other], target_for(TURN), TURN)
    rooms = [(image.room, image.budget_base64) for image in batch.attached]
    assert rooms == [("slot", SLOT), ("turn", 3 * SLOT)]
    assert [index for index, _ in batch.skipped] == [1]


@slow
def test_the_routes_cap_and_the_clients_cap_still_win(page: bytes) -> None:
    capped = only(TURN, page, route_cap=400_000)
    assert (capped.room, capped.budget_base64) == ("turn", 400_000)
    assert len(capped.base64) <= 400_000
    squeezed = only(TURN, page, result_budget=300_000)
    assert squeezed.budget_base64 == 300_000 and len(squeezed.base64) <= 300_000


@slow
def test_the_tiles_of_a_lone_tall_capture_keep_one_slots_budget_each() -> None:
    tall = busy_page(800, 5000, seed=7)
    batch = process_images([tall], target_for(TURN), TURN)
    assert len(batch.attached) == 4
    for tile in batch.attached:
        assert (tile.room, tile.budget_base64) == ("slot", SLOT)
        assert len(tile.base64) <= SLOT


@slow
def test_the_record_says_which_room_a_fit_had(page: bytes, tmp_path: Path) -> None:
    policy = tmp_path / "turn.yaml"
    policy.write_text(with_native("    lone_image: turn\n"))
    router = make_router(tmp_path / "cache", policy=str(policy))
    result = {"content": [{"type": "image", "data": _b64(page), "mimeType": "image/png"}]}
    routed = asyncio.run(router.mcp(result, provider="anthropic", model="claude-sonnet-4-5"))
    (attached,) = routed.record["execution"]["attached"]
    assert (attached["room"], attached["budget_base64"]) == ("turn", 4 * SLOT)
    assert SLOT < attached["base64_bytes"] <= 4 * SLOT


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_the_setting_is_read_per_source() -> None:
    text = with_native("    lone_image: turn\n    sources:\n      mcp: {lone_image: slot}\n")
    compiled, diagnostics = analyze_policy_text(text, "p.yaml")
    assert compiled is not None, [d.render() for d in diagnostics]
    execution = compiled.policy.execution
    assert execution.native.lone_image == "turn"
    assert execution.native_for("browser").lone_image == "turn"
    assert execution.native_for("mcp").lone_image == "slot"


@pytest.mark.parametrize(
    ("line", "code", "help_text"),
    [
        ("    lone_image: turns\n", "unknown-value", "did you mean `turn`?"),
        ("    lone_images: turn\n", "unknown-key", "did you mean `lone_image`?"),
    ],
)
def test_a_typo_is_a_located_diagnostic_with_help(line: str, code: str, help_text: str) -> None:
    compiled, diagnostics = analyze_policy_text(with_native(line), "p.yaml")
    assert compiled is None
    (found,) = [d for d in diagnostics if d.code == code]
    assert found.location.line == BASE[: BASE.index(NATIVE_KEYS)].count("\n") + 2
    assert help_text in found.help
