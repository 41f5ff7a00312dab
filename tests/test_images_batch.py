"""Batches: slots, candidates, refusals giving their slot, de-duplication, and the async API."""

from __future__ import annotations

import asyncio
import hashlib
import threading

import pytest
from _image_samples import encode, screenshot, target

from visiongate.adapters.images import (
    BatchResult,
    ImageWorker,
    _batch,
    process_images,
    process_images_async,
)
from visiongate.engine._settings import NativeSettings

SVG = b"<svg xmlns='http://www.w3.org/2000/svg'/>"


def small(seed: int) -> bytes:
    return encode(screenshot(160, 100, seed=seed), "PNG")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_both(
    images: list[bytes], settings: NativeSettings, seen: frozenset[str] = frozenset()
) -> BatchResult:
    """The sync result, after checking the async API gives exactly the same one."""
    result = process_images(images, target(), settings, seen_hashes=seen)
    with ImageWorker() as worker:
        concurrent = asyncio.run(
            worker.process_images(images, target(), settings, seen_hashes=seen)
        )
    assert concurrent == result
    return result


def test_at_most_max_images_are_attached_in_order() -> None:
    images = [small(seed) for seed in range(6)]
    result = run_both(images, NativeSettings(max_images=4))
    assert result.attached_indexes == (0, 1, 2, 3)
    assert [image.sha256 for image in result.attached] == [digest(d) for d in images[:4]]
    assert result.not_tried == (4, 5)
    assert result.refused == () and result.skipped == ()


def test_a_refused_image_gives_its_slot_to_the_next() -> None:
    images = [small(0), SVG, small(1), b"junk", small(2), small(3)]
    result = run_both(images, NativeSettings(max_images=3))
    assert result.attached_indexes == (0, 2, 4)
    assert [index for index, _ in result.refused] == [1, 3]
    assert result.refused[0][1].reason == "refused: svg is not a raster image"
    assert result.not_tried == (5,)


def test_candidates_bound_the_images_tried() -> None:
    images = [SVG, SVG + b" ", b"x", b"y", small(0), small(1)]
    result = run_both(images, NativeSettings(max_images=4, candidates=3))
    assert result.attached == ()
    assert [index for index, _ in result.refused] == [0, 1, 2]
    assert result.not_tried == (3, 4, 5)


def test_an_image_already_in_the_conversation_is_skipped_with_a_note() -> None:
    images = [small(0), small(1)]
    result = run_both(images, NativeSettings(), frozenset({digest(images[0])}))
    assert result.attached_indexes == (1,)
    index, skipped = result.skipped[0]
    assert index == 0 and skipped.sha256 == digest(images[0])
    assert skipped.note.startswith("skipped: same image as one already in the conversation")


def test_a_duplicate_within_the_result_is_skipped_and_costs_no_slot() -> None:
    first = small(0)
    images = [first, first, small(1), first]
    result = run_both(images, NativeSettings(max_images=2))
    assert result.attached_indexes == (0, 2)
    assert [index for index, _ in result.skipped] == [1]
    assert result.skipped[0][1].note == "skipped: same image as image 1 in this result"
    assert result.not_tried == (3,)


def test_a_duplicate_of_a_refused_image_is_tried_again() -> None:
    result = run_both([SVG, SVG, small(0)], NativeSettings(max_images=1))
    assert [index for index, _ in result.refused] == [0, 1]
    assert result.attached_indexes == (2,)


def test_empty_batch() -> None:
    assert run_both([], NativeSettings()) == BatchResult((), (), (), (), ())


def test_the_default_worker_is_shared_and_bounded() -> None:
    images = [small(seed) for seed in range(3)]
    result = asyncio.run(process_images_async(images, target(), NativeSettings()))
    assert result.attached_indexes == (0, 1, 2)


def test_a_worker_needs_a_thread() -> None:
    with pytest.raises(ValueError):
        ImageWorker(max_workers=0)


def test_the_event_loop_keeps_serving_while_4k_screenshots_are_processed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop that serves MCP servers must not stall on pixels. Shown without a clock: each
    image's work waits, on its worker thread, for a coroutine that only the event loop can run.
    Were the work on the loop (or holding it), that coroutine could never run and the wait
    would end in the deadlock guard's timeout instead."""
    screens = [encode(screenshot(3840, 2160, seed=seed), "PNG") for seed in range(4)]
    served = threading.Event()
    threads: set[int] = set()
    real = _batch.process_with_digest

    def waits_for_the_loop(*args: object, **kwargs: object) -> object:
        threads.add(threading.get_ident())
        assert served.wait(timeout=60), "the event loop never ran while images were processed"
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_batch, "process_with_digest", waits_for_the_loop)

    async def scenario() -> tuple[BatchResult, int]:
        loop_thread = threading.get_ident()

        async def serve_once() -> None:
            while not threads:  # the first image has reached its worker thread
                await asyncio.sleep(0)
            served.set()

        server = asyncio.create_task(serve_once())
        with ImageWorker() as worker:
            result = await worker.process_images(screens, target(), NativeSettings())
        await server
        return result, loop_thread

    result, loop_thread = asyncio.run(scenario())
    assert len(result.attached) == 4
    assert threads and loop_thread not in threads
