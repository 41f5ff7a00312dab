"""Work and memory per image are bounded by its pixel count; large decodes share a budget.

The time and RSS figures themselves are measured by bench/bench_image_memory.py; these tests
pin the mechanisms: one conversion pass instead of one per predictor tile, the decoded frame
released once the working copy exists, and reservations that never exceed the budget.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import weakref
from collections.abc import Iterator

import pytest
from _image_samples import encode, png_declaring, screenshot, target
from PIL import Image

from visiongate.adapters.images import ImageWorker, ProcessedImage, process_image, process_images
from visiongate.adapters.images._decode import decode, fitted_size
from visiongate.adapters.images._memory import (
    PEAK_FACTOR,
    MemoryBudget,
    predicted_peak,
)
from visiongate.adapters.images._source import SourceImage
from visiongate.engine._settings import NativeSettings


def translucent(width: int, height: int) -> Image.Image:
    image = screenshot(width, height).convert("RGBA")
    image.putalpha(200)
    return image


@pytest.fixture
def converted_pixels(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Pixels passed through `Image.convert`, call by call (Pillow's resize converts too)."""
    counted: list[int] = []
    real = Image.Image.convert

    def counting(self: Image.Image, *args: object, **kwargs: object) -> Image.Image:
        counted.append(self.width * self.height)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Image.Image, "convert", counting)
    yield counted


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
@pytest.mark.parametrize("size", [(3000, 1700), (6400, 3600)], ids=["in-place", "reduced"])
def test_a_translucent_image_is_converted_once_not_once_per_predictor_tile(
    size: tuple[int, int], converted_pixels: list[int]
) -> None:
    # The predictor resized the full RGBA image for each of its 100 tiles, converting it to
    # premultiplied alpha and back each time: 9.24 s for a 5120x2880 translucent screenshot.
    data = encode(translucent(*size), "PNG")
    converted_pixels.clear()
    result = process_image(data, target())
    assert isinstance(result, ProcessedImage) and result.probe_encodes > 0
    assert sum(converted_pixels) <= 2 * size[0] * size[1]


def _source(image: Image.Image) -> tuple[SourceImage, weakref.ref[Image.Image]]:
    facts, pixels = decode(encode(image, "PNG"), "image/png", 1568)
    freed = weakref.ref(pixels)
    source = SourceImage(pixels, facts, fitted_size(facts.width, facts.height, 1568))
    del pixels
    gc.collect()
    return source, freed


def test_a_large_frame_is_reduced_once_and_freed() -> None:
    source, freed = _source(translucent(6400, 400))
    assert freed() is None
    assert source.image.size == (3200, 200) and source.image.mode == "RGBa"
    assert source.at((1568, 98)).mode == "RGBA"


def test_a_frame_within_reach_of_its_output_is_used_in_place() -> None:
    source, freed = _source(translucent(3000, 1700))
    assert freed() is source.image  # no copy: each resize premultiplies a band at a time


def test_an_opaque_alpha_channel_is_dropped_without_a_full_copy_of_the_frame() -> None:
    source, _ = _source(screenshot(6400, 400).convert("RGBA"))
    assert source.image.mode == "RGB" and source.image.size == (3200, 200)


# -- the memory budget ------------------------------------------------------------------------


def test_reservations_never_exceed_the_budget() -> None:
    budget = MemoryBudget(100)
    holding: list[int] = []
    highest = 0
    lock = threading.Lock()

    def work(amount: int) -> None:
        nonlocal highest
        held = min(amount, budget.total)  # more than the whole budget waits to run alone
        with budget.reserve(amount):
            with lock:
                holding.append(held)
                highest = max(highest, sum(holding))
            time.sleep(0.005)
            with lock:
                holding.remove(held)

    threads = [threading.Thread(target=work, args=(amount,)) for amount in [60, 30, 60, 500] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 60 <= highest <= 100
    assert budget.reserved == 0


def test_peaks_are_predicted_from_the_header_alone() -> None:
    assert predicted_peak(png_declaring(8192, 8192), 1568) == int(8192 * 8192 * 4 * PEAK_FACTOR)
    # WebP's, which depend on how it will be decoded: tests/test_images_webp.py
    photo = Image.linear_gradient("L").resize((4096, 4096)).convert("RGB")
    baseline = predicted_peak(encode(photo, "JPEG"), 1568)
    progressive = predicted_peak(encode(photo, "JPEG", progressive=True), 1568)
    assert baseline == int(2048 * 2048 * 4 * PEAK_FACTOR)  # libjpeg decodes at half size
    assert progressive == baseline + 4096 * 4096 * 4  # its coefficients stay full size
    assert predicted_peak(b"not an image", 1568) == predicted_peak(b"\x89PNG\r\n\x1a\n", 1568)


def test_a_worker_with_a_tiny_budget_runs_images_one_at_a_time_to_the_same_result() -> None:
    images = [encode(screenshot(400 + 10 * index, 300, seed=index), "PNG") for index in range(5)]
    expected = process_images(images, target(), NativeSettings())
    with ImageWorker(4, memory_budget=1) as worker:
        result = asyncio.run(worker.process_images(images, target(), NativeSettings()))
    assert result == expected


def test_a_budget_must_be_positive() -> None:
    with pytest.raises(ValueError, match="memory budget must be positive"):
        ImageWorker(memory_budget=0)
