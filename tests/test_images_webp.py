"""Still WebP is decoded by libwebp's simple API into the frame itself; animations by Pillow.

Pillow's own WebP decode holds 4x the frame (bench/bench_image_memory.py); the stage decodes a
still WebP through libwebp (found next to Pillow) into a buffer Pillow maps as the frame. These
tests pin that the pixels are Pillow's, that broken files are still refused, that animations
keep Pillow's path, and that without libwebp everything goes through Pillow as before.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterator
from pathlib import Path

import PIL
import pytest
from _image_samples import encode, exif_orientation, photo, screenshot, target
from PIL import Image, ImageCms

from visiongate.adapters.images import ProcessedImage, RefusedImage, _decode, process_image
from visiongate.adapters.images._decode import decode, decodes_directly, libwebp
from visiongate.adapters.images._memory import (
    WEBP_PEAK_FACTOR,
    WEBP_STILL_PEAK_FACTOR,
    predicted_peak,
)


def translucent_photo() -> Image.Image:
    image = photo().convert("RGBA")
    image.putalpha(Image.radial_gradient("L").resize(image.size))
    return image


SAMPLES: dict[str, Callable[[], bytes]] = {
    "lossless rgba": lambda: encode(translucent_photo(), "WEBP", lossless=True),
    "lossy rgba": lambda: encode(translucent_photo(), "WEBP", quality=70),
    "lossless rgb": lambda: encode(photo(), "WEBP", lossless=True),
    "lossy rgb": lambda: encode(photo(), "WEBP", quality=70),
    "lossy rgb odd size": lambda: encode(screenshot(333, 211), "WEBP", quality=20),
}


@pytest.fixture
def libwebp_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Sizes of the buffers libwebp decoded into, through the real library."""
    library = libwebp()
    if library is None:
        pytest.skip("no libwebp beside Pillow or on the system")
    calls: list[int] = []

    def decode_rgba_into(*args: object) -> int | None:
        calls.append(int(args[3]))  # type: ignore[call-overload]
        return library.decode_rgba_into(*args)

    spied = dataclasses.replace(library, decode_rgba_into=decode_rgba_into)
    monkeypatch.setattr(_decode, "libwebp", lambda: spied)
    yield calls


@pytest.fixture
def without_libwebp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_decode, "libwebp", lambda: None)


def pillow_decode(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return image.copy()


@pytest.mark.parametrize("name", SAMPLES)
def test_a_still_webp_decodes_through_libwebp_to_pillows_pixels(
    name: str, libwebp_calls: list[int]
) -> None:
    data = SAMPLES[name]()
    facts, pixels = decode(data, "image/webp", 1568)
    expected = pillow_decode(data)
    assert libwebp_calls == [expected.width * expected.height * 4]
    assert (facts.mode, pixels.mode, pixels.size) == (expected.mode, expected.mode, expected.size)
    assert pixels.tobytes() == expected.tobytes()
    assert (facts.frames, facts.bare) == (1, True)


@pytest.mark.parametrize("name", SAMPLES)
def test_without_libwebp_a_still_webp_decodes_through_pillow(
    name: str, without_libwebp: None
) -> None:
    data = SAMPLES[name]()
    facts, pixels = decode(data, "image/webp", 1568)
    expected = pillow_decode(data)
    assert not decodes_directly(data, Image.open(io.BytesIO(data)))
    assert (facts.mode, pixels.tobytes()) == (expected.mode, expected.tobytes())


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_the_stage_gives_the_same_result_with_or_without_libwebp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = encode(translucent_photo().resize((2048, 2048)), "WEBP", quality=80)
    direct = process_image(data, target(edge=1000))
    monkeypatch.setattr(_decode, "libwebp", lambda: None)
    assert isinstance(direct, ProcessedImage)
    assert direct == process_image(data, target(edge=1000))


def corrupt_lossless() -> bytes:
    """A lossless WebP whose container is sound and whose bitstream is not."""
    data = bytearray(encode(photo(), "WEBP", lossless=True))
    data[40:80] = b"\xff" * 40
    return bytes(data)


@pytest.mark.parametrize("with_libwebp", [True, False])
def test_a_corrupt_webp_bitstream_is_refused(
    with_libwebp: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not with_libwebp:
        monkeypatch.setattr(_decode, "libwebp", lambda: None)
    result = process_image(corrupt_lossless(), target())
    assert isinstance(result, RefusedImage)
    assert result.reason.startswith("refused: webp image is truncated or corrupt (")
    if with_libwebp and libwebp() is not None:
        assert result.reason.endswith("(libwebp cannot decode the image data)")


def test_a_truncated_webp_is_refused() -> None:
    data = SAMPLES["lossy rgb"]()
    result = process_image(data[: len(data) // 2], target())
    assert isinstance(result, RefusedImage)
    assert result.reason.startswith("refused: webp image is truncated or corrupt (")


def test_an_animated_webp_keeps_pillows_decoder_and_its_first_frame(
    libwebp_calls: list[int],
) -> None:
    frames = [Image.new("RGB", (48, 32), colour) for colour in ("red", "blue", "green")]
    data = encode(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    facts, pixels = decode(data, "image/webp", 1568)
    assert libwebp_calls == []
    assert facts.frames == 3
    assert pixels.convert("RGB").getpixel((10, 10)) == (255, 0, 0)


def one_frame_animation(still: Image.Image) -> bytes:
    """An animation (VP8X with the animation flag) of a single frame: Pillow never writes one."""
    width, height = still.size
    frame = encode(still, "WEBP", lossless=True)[12:]  # the VP8L chunk

    def u24(value: int) -> bytes:
        return value.to_bytes(3, "little")

    def chunk(kind: bytes, body: bytes) -> bytes:
        return kind + len(body).to_bytes(4, "little") + body + b"\0" * (len(body) & 1)

    vp8x = chunk(b"VP8X", b"\x02\0\0\0" + u24(width - 1) + u24(height - 1))
    anim = chunk(b"ANIM", b"\0\0\0\0\0\0")
    anmf = chunk(b"ANMF", u24(0) + u24(0) + u24(width - 1) + u24(height - 1) + u24(100) + b"\0")
    body = b"WEBP" + vp8x + anim + anmf[:4] + (len(anmf) - 8 + len(frame)).to_bytes(4, "little")
    body += anmf[8:] + frame
    return b"RIFF" + len(body).to_bytes(4, "little") + body


def test_a_one_frame_animation_is_composed_by_pillow(libwebp_calls: list[int]) -> None:
    still = photo().resize((64, 48))
    data = one_frame_animation(still)
    with Image.open(io.BytesIO(data)) as image:
        assert image.n_frames == 1  # type: ignore[attr-defined]
        assert not decodes_directly(data, image)
    facts, pixels = decode(data, "image/webp", 1568)
    assert libwebp_calls == []
    assert facts.frames == 1
    assert pixels.convert("RGB").tobytes() == still.tobytes()


def test_orientation_and_profile_come_from_the_header(libwebp_calls: list[int]) -> None:
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    data = encode(photo(), "WEBP", exif=exif_orientation(6), icc_profile=profile)
    facts, _ = decode(data, "image/webp", 1568)
    assert libwebp_calls
    assert (facts.orientation, facts.icc_profile, facts.width) == (6, profile, 512)


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_peaks_of_webp_are_predicted_by_how_it_will_be_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    still = encode(Image.new("RGB", (4000, 3000)), "WEBP", quality=10)
    frames = [Image.new("RGB", (2000, 1000), colour) for colour in ("red", "blue")]
    moving = encode(frames[0], "WEBP", save_all=True, append_images=frames[1:])
    if libwebp() is not None:
        assert predicted_peak(still, 1568) == int(4000 * 3000 * 4 * WEBP_STILL_PEAK_FACTOR)
    assert predicted_peak(moving, 1568) == int(2000 * 1000 * 4 * WEBP_PEAK_FACTOR)
    monkeypatch.setattr(_decode, "libwebp", lambda: None)
    assert predicted_peak(still, 1568) == int(4000 * 3000 * 4 * WEBP_PEAK_FACTOR)


def test_the_libwebp_pillow_carries_is_preferred() -> None:
    vendored = sorted(Path(PIL.__file__).resolve().parent.parent.glob("pillow.libs/libwebp-*"))
    if not vendored:
        pytest.skip("this Pillow carries no libwebp of its own")
    library = libwebp()
    assert library is not None and library.path == str(vendored[0])
