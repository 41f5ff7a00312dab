"""The fit cache, and no more bytes for fewer pixels (issue 27).

The same 2560x1440 screenshot was fitted again on every call (~190 ms through the proxy), and
a server's 2560x1440 JPEG of 107 KB came back as a 1568x882 JPEG of 168 KB.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import random
from pathlib import Path

import pytest
from _image_samples import FONT, WORDS, encode, screenshot, target
from _routing_helpers import make_router
from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters.images import FitCache, ImageWorker, ProcessedImage, process_image
from visiongate.adapters.images import _batch as batch_module
from visiongate.adapters.images._memo import FitKey
from visiongate.adapters.images._types import MEMORY_REFUSAL, RefusedImage
from visiongate.engine._settings import NativeSettings


def test_a_repeated_screenshot_is_fitted_once() -> None:
    data = encode(screenshot(2560, 1440), "PNG")
    fitted: list[str] = []
    process = batch_module.process_with_digest

    def counted(*arguments: object) -> object:
        fitted.append(str(arguments[2]))
        return process(*arguments)  # type: ignore[arg-type]

    async def twice(worker: ImageWorker) -> list[ProcessedImage]:
        images = []
        for _ in range(2):
            batch = await worker.process_images([data], target(), NativeSettings())
            images += batch.attached
        return images

    with pytest.MonkeyPatch.context() as patch, ImageWorker() as worker:
        patch.setattr(batch_module, "process_with_digest", counted)
        first, second = asyncio.run(twice(worker))
        assert worker.fit_cache.hits == 1 and len(fitted) == 1
    assert second is first  # the same result, its base64 text already rendered


def test_the_router_fits_a_repeated_screenshot_once(tmp_path: Path) -> None:
    encoded = base64.b64encode(encode(screenshot(2560, 1440, seed=27), "PNG")).decode("ascii")
    result = {"content": [{"type": "image", "data": encoded, "mimeType": "image/png"}]}
    router = make_router(tmp_path)
    cache = batch_module.default_worker().fit_cache
    hits = cache.hits

    async def twice() -> list[object]:
        native = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
        return [await router.mcp(result, **native, trace=False) for _ in range(2)]

    first, second = asyncio.run(twice())
    assert cache.hits == hits + 1
    assert first.images == second.images and first.images[0] is second.images[0]  # type: ignore[attr-defined]


def test_a_different_target_is_fitted_again() -> None:
    data = encode(screenshot(1920, 1080), "PNG")
    cache = FitCache()
    for budget in (262_144, 100_000):
        batch_module.process_images(
            [data], target(budget=budget), NativeSettings(), fit_cache=cache
        )
    assert (cache.hits, cache.misses, len(cache)) == (0, 2, 2)


def _result(size: int, name: str) -> ProcessedImage:
    image = process_image(encode(screenshot(64, 48), "PNG"), target())
    assert isinstance(image, ProcessedImage)
    return dataclasses.replace(image, data=bytes(size), sha256=name)


def test_the_cache_is_bounded_by_entries_and_by_bytes_least_recent_out() -> None:
    cache = FitCache(max_entries=2, max_bytes=10_000_000)
    keys = [FitKey(str(n), target(), None) for n in range(3)]
    for key in keys:
        cache.put(key, _result(100, key.sha256))
    assert len(cache) == 2 and cache.get(keys[0]) is None and cache.get(keys[2]) is not None
    small = FitCache(max_entries=100, max_bytes=3 * 1024 + 3 * 1000 * 7 // 3)
    for key in keys:
        small.put(key, _result(1000, key.sha256))
    small.get(keys[1])  # now the most recent
    small.put(FitKey("3", target(), None), _result(1000, "3"))
    assert small.get(keys[0]) is None and small.get(keys[1]) is not None
    assert small.size_bytes <= small.max_bytes


def test_a_refusal_for_lack_of_memory_is_not_kept() -> None:
    cache = FitCache()
    key = FitKey("a" * 64, target(), None)
    cache.put(key, RefusedImage(MEMORY_REFUSAL, "a" * 64, "image/png"))
    assert cache.get(key) is None


def dashboard() -> Image.Image:
    """A 2560x1440 capture of a sparse page at 2x: a bar, a sidebar, some lines of text."""
    rng = random.Random(27)
    image = Image.new("RGB", (2560, 1440), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 2560, 80), fill=(31, 41, 55))
    draw.rectangle((0, 80, 440, 1440), fill=(243, 244, 246))
    font = ImageFont.truetype(str(FONT), 28)
    for row in range(12):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
        draw.text((500, 160 + 64 * row), words, font=font, fill=(20, 20, 20))
    return image


@pytest.mark.parametrize("quality", [30, 40, 80])
def test_a_smaller_jpeg_never_has_more_bytes_than_the_jpeg_it_came_from(quality: int) -> None:
    # Fitted to 1568x882 at JPEG q95, a 113 KiB capture at q30 came back as 135 KiB.
    data = encode(dashboard(), "JPEG", quality=quality)
    result = process_image(data, target())
    assert isinstance(result, ProcessedImage)
    assert (result.width, result.height) == (1568, 882)
    assert len(result.data) <= len(data)
    assert result.quality is not None and result.quality >= 50  # within the quality floors


def test_a_source_larger_than_the_budget_uses_the_budget() -> None:
    data = encode(screenshot(2560, 1440), "PNG")
    result = process_image(data, target())
    assert isinstance(result, ProcessedImage)
    assert len(data) > target().budget_bytes >= len(result.data)
