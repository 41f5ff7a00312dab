"""The one private Pillow call (`_imaging.map_buffer`) and the Pillow cap it is checked under.

Pillow does not promise its private API: a release may remove or change it. These tests fail
loudly on such a Pillow (CI runs them on the newest Pillow the pin allows), while users of it
get the public-API fallback, which must give the same pixels.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

import PIL
import pytest
from PIL import Image, _imaging

from visiongate.adapters.images import _decode
from visiongate.adapters.images._decode import PILLOW_CHECKED_BELOW, mapped_frame

ROOT = Path(__file__).parent.parent
SIZE = (5, 3)


def pixels_of() -> bytearray:
    """Four bytes a pixel, each pixel distinct; the fourth byte is alpha or unused."""
    return bytearray(
        value for index in range(SIZE[0] * SIZE[1]) for value in (index * 9, 200 - index, 7, 255)
    )


def pixels(frame: Image.Image) -> list[tuple[int, ...]]:
    # Not `getdata`: deprecated in Pillow 13, removed in 14.
    return [frame.getpixel((x, y)) for y in range(frame.height) for x in range(frame.width)]


def expected(mode: str, data: bytearray) -> list[tuple[int, ...]]:
    quads = [tuple(data[i : i + 4]) for i in range(0, len(data), 4)]
    return [quad if mode == "RGBA" else quad[:3] for quad in quads]


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_map_buffer_maps_the_buffer_as_visiongate_calls_it(mode: str) -> None:
    """Fails on a Pillow that removed or changed `_imaging.map_buffer`: then the decoder runs
    on its copying fallback, and this test says so before a user's memory does."""
    assert callable(getattr(_imaging, "map_buffer", None)), f"Pillow {PIL.__version__}"
    data = pixels_of()
    core = _imaging.map_buffer(data, SIZE, "raw", 0, (mode, 0, 1))
    frame = Image.new(mode, (0, 0))._new(core)
    assert (frame.mode, frame.size) == (mode, SIZE)
    assert pixels(frame) == expected(mode, data)
    data[0] = 123  # mapped, not copied: the frame sees the buffer change
    assert frame.getpixel((0, 0))[0] == 123


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
def test_mapped_frame_takes_the_mapping_path(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def copied(*_args: object, **_kwargs: object) -> Image.Image:
        raise AssertionError("the public-API copy ran: the private call failed")

    monkeypatch.setattr(Image, "frombytes", copied)
    monkeypatch.setattr(Image, "frombuffer", copied)
    data = pixels_of()
    assert pixels(mapped_frame(data, mode, SIZE)) == expected(mode, data)


@pytest.mark.parametrize("mode", ["RGB", "RGBA"])
@pytest.mark.parametrize(
    "core",
    [SimpleNamespace(), SimpleNamespace(map_buffer=lambda *args: (_ for _ in ()).throw(TypeError))],
    ids=["removed", "changed"],
)
def test_without_map_buffer_the_fallback_gives_the_same_pixels(
    mode: str, core: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_decode, "_imaging", core)
    data = pixels_of()
    frame = mapped_frame(data, mode, SIZE)
    assert (frame.mode, frame.size) == (mode, SIZE)
    assert pixels(frame) == expected(mode, data)


def test_the_pillow_cap_is_the_one_the_private_call_was_checked_under() -> None:
    """Raising the cap in pyproject.toml means checking `mapped_frame` on the new Pillow
    (these tests, in CI's newest-Pillow run) and raising `PILLOW_CHECKED_BELOW` with it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [pillow] = [dep for dep in project["project"]["dependencies"] if dep.startswith("Pillow")]
    assert f"<{PILLOW_CHECKED_BELOW}" in pillow.split(","), pillow
    assert int(PIL.__version__.split(".")[0]) < PILLOW_CHECKED_BELOW, PIL.__version__
