"""The description cache: keyed by content, bounded, thread-safe, and never caching failures."""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest
from PIL import Image, ImageDraw

from visiongate.adapters.vision import (
    CachedVisionBackend,
    Description,
    LocalOCRBackend,
    VisionUnavailable,
)
from visiongate.adapters.vision._cache import cache_key


@dataclass
class Counting:
    """A backend wrapper that counts calls; it can be told to fail the next ones."""

    inner: object | None = None
    calls: int = 0
    failures_left: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return "counting"

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        with self.lock:
            self.calls += 1
            failing = self.failures_left > 0
            self.failures_left -= failing
        if failing:
            raise VisionUnavailable("the test backend is down")
        if isinstance(self.inner, LocalOCRBackend):
            return self.inner.describe(image, media_type, question=question)
        return Description(f"{len(image)} bytes, asked {question}", self.name, False, 1.0)


@pytest.fixture(scope="module")
def screenshot() -> bytes:
    image = Image.new("RGB", (400, 120), "white")
    ImageDraw.Draw(image).text((20, 40), "Deploy finished", fill="black", font_size=28)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_second_call_is_cached_and_the_engine_runs_once(screenshot: bytes) -> None:
    counting = Counting(LocalOCRBackend())
    cached = CachedVisionBackend(counting)
    first = cached.describe(screenshot, "image/png")
    second = cached.describe(bytes(screenshot), "image/png")
    assert counting.calls == 1
    assert not first.cached and second.cached
    assert second.text == first.text
    assert "Deploy finished" in first.text
    assert second.elapsed_ms < first.elapsed_ms


def test_question_is_part_of_the_key() -> None:
    counting = Counting()
    cached = CachedVisionBackend(counting)
    cached.describe(b"img", "image/png")
    cached.describe(b"img", "image/png", question="what is red?")
    cached.describe(b"img", "image/png", question="what is red?")
    assert counting.calls == 2
    assert cache_key(b"img", None) != cache_key(b"img", "x")


def test_failures_are_not_cached() -> None:
    counting = Counting(failures_left=1)
    cached = CachedVisionBackend(counting)
    with pytest.raises(VisionUnavailable):
        cached.describe(b"img", "image/png")
    assert not cached.describe(b"img", "image/png").cached
    assert counting.calls == 2


def test_least_recently_used_entry_is_dropped() -> None:
    counting = Counting()
    cached = CachedVisionBackend(counting, max_entries=2)
    for image in (b"a", b"b", b"a", b"c"):
        cached.describe(image, "image/png")
    assert len(cached) == 2
    assert cached.describe(b"a", "image/png").cached
    assert not cached.describe(b"b", "image/png").cached


def test_concurrent_callers_share_the_cache() -> None:
    counting = Counting()
    cached = CachedVisionBackend(counting, max_entries=8)
    images = [bytes([index]) for index in range(8)]
    cached_once = [cached.describe(image, "image/png") for image in images]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: cached.describe(images[i % 8], "x"), range(200)))
    assert counting.calls == len(cached_once)
    assert all(result.cached for result in results)
