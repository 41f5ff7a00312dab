"""The images of one tool result: at most N attached, tried in order, off the loop if async.

Images run in a bounded worker pool that also reserves each image's peak memory (`_memory`).
A tall or wide capture may become several tiles, each taking a slot; the slots free when a
window of images starts are shared equally among them, so any number in flight gives the
one-at-a-time result. What the stage made of an image is kept in a fit cache by (content hash,
target): the same screenshot for the same target is fitted once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Final, ParamSpec, TypeVar

from visiongate.engine import NativeSettings

from ._memo import FitCache, FitKey
from ._memory import DEFAULT_MEMORY_BUDGET, MemoryBudget, predicted_peak
from ._process import Processed, base64_length, process_with_digest
from ._tiles import TallSettings
from ._types import (
    BatchResult,
    ImageTarget,
    ProcessedImage,
    RefusedImage,
    SkippedImage,
    TiledImage,
    Uncovered,
)

_P = ParamSpec("_P")
_R = TypeVar("_R")

DEFAULT_WORKERS: Final = 2
"""Threads of the default worker: Pillow releases the GIL while it decodes, resizes and encodes."""
INLINE_BYTES: Final = 64 * 1024
"""Images smaller than this together are hashed where they are asked for: 0.1 ms of work
costs less than the hop to a thread."""
_MIN_SHARE: Final = 4
"""The smallest per-image budget a share can give (ImageTarget's own minimum): an image that
cannot fit in it is refused with the stage's reason, never attached over the budget."""


@dataclasses.dataclass(frozen=True)
class _Job:
    """What the images of one window are fitted for."""

    target: ImageTarget
    tall: TallSettings


class _Planner:
    """Which image to try next, so that any number in flight gives the one-at-a-time result.

    With a `result_budget` (base64 characters for all the images of one result together), each
    window's images share what is left equally among the images still to attach; what an image
    does not use goes to the next window, so later images get more room, never less.
    """

    def __init__(
        self,
        count: int,
        settings: NativeSettings,
        seen_hashes: frozenset[str],
        digest_of: Callable[[int], str],
        result_budget: int | None = None,
    ) -> None:
        self._count = count
        self._settings = settings
        self._digest_of = digest_of
        self._left = result_budget
        self._attached_at: dict[str, int] = {}
        self._seen = seen_hashes
        self._cursor = 0
        self._tried = 0
        self._attached: list[tuple[int, ProcessedImage]] = []
        self._refused: list[tuple[int, RefusedImage]] = []
        self._skipped: list[tuple[int, SkippedImage]] = []
        self._uncovered: list[tuple[int, Uncovered]] = []

    def next_window(self) -> list[tuple[int, str]]:
        """Candidates (index, digest) that can all run now: no more than the free slots."""
        window: list[tuple[int, str]] = []
        while self._cursor < self._count and len(window) < self._room():
            digest = self._digest_of(self._cursor)
            if self._skip_if_known(self._cursor, digest):
                self._cursor += 1
                continue
            if any(digest == queued for _, queued in window):
                break  # whether it is a duplicate depends on a result still in flight
            window.append((self._cursor, digest))
            self._cursor += 1
        return window

    def job_for(self, target: ImageTarget, window: Sequence[tuple[int, str]]) -> _Job:
        """What the images of `window` are fitted for: `target` (the turn's room for the last
        image, where the policy allows it), or their equal share of what is left of the
        result budget when that is smaller; and the slots each may take."""
        free = self._settings.max_images - len(self._attached)
        slots = 1 + max(0, free - len(window)) // max(1, len(window))
        settings = self._settings
        tall = TallSettings(settings.tall_images, settings.legibility_scale, slots)
        job = self._by_room(target, tall, window, free)
        if self._left is None or not window:
            return job
        expected = max(1, min(free, len(window) + self._count - self._cursor))
        share = max(_MIN_SHARE, self._left // expected)
        tall = dataclasses.replace(job.tall, budget_base64=share)
        if share >= job.target.budget_base64:
            return dataclasses.replace(job, tall=tall)
        return _Job(dataclasses.replace(job.target, budget_base64=share), tall)

    def _by_room(
        self, target: ImageTarget, tall: TallSettings, window: Sequence[tuple[int, str]], free: int
    ) -> _Job:
        """The turn's room for a window of one image with none left after it: the budget of
        every free slot, within the route's cap; its tiles, if it becomes tiles, keep one
        slot's budget each (each takes a slot)."""
        turn = target.turn_budget_base64
        if turn is None or len(window) != 1 or self._cursor < self._count:
            return _Job(target, tall)
        room = min(turn, free * target.budget_base64)
        if room <= target.budget_base64:
            return _Job(target, tall)
        tall = dataclasses.replace(tall, tile_budget_base64=target.budget_base64)
        return _Job(dataclasses.replace(target, budget_base64=room, room="turn"), tall)

    def record(self, index: int, digest: str, result: Processed) -> None:
        """Note what became of a candidate from the last window."""
        self._tried += 1
        if isinstance(result, RefusedImage):
            self._refused.append((index, result))
            return
        images = result.tiles if isinstance(result, TiledImage) else (result,)
        for image in images:
            if self._left is not None:
                self._left = max(0, self._left - base64_length(len(image.data)))
            self._attached.append((index, image))
        if images:
            self._attached_at.setdefault(digest, index)
        if isinstance(result, TiledImage) and result.uncovered is not None:
            self._uncovered.append((index, result.uncovered))

    def result(self) -> BatchResult:
        """The batch outcome; images past the cursor were never looked at."""
        return BatchResult(
            attached=tuple(image for _, image in self._attached),
            refused=tuple(self._refused),
            skipped=tuple(self._skipped),
            not_tried=tuple(range(self._cursor, self._count)),
            attached_indexes=tuple(index for index, _ in self._attached),
            uncovered=tuple(self._uncovered),
        )

    def _room(self) -> int:
        free_slots = self._settings.max_images - len(self._attached)
        return max(0, min(free_slots, self._settings.candidates - self._tried))

    def _skip_if_known(self, index: int, digest: str) -> bool:
        if digest in self._seen:
            note = f"skipped: same image as one already in the conversation (sha256 {digest[:12]})"
        elif digest in self._attached_at:
            note = f"skipped: same image as image {self._attached_at[digest] + 1} in this result"
        else:
            return False
        self._skipped.append((index, SkippedImage(sha256=digest, note=note)))
        return True


def _cached(
    cache: FitCache | None, job: _Job, digest: str, run: Callable[[], Processed]
) -> Processed:
    if cache is None:
        return run()
    key = FitKey(digest, job.target, job.tall)
    found = cache.get(key)
    if found is None:
        found = run()
        cache.put(key, found)
    return found


def process_images(
    images: Sequence[bytes],
    target: ImageTarget,
    settings: NativeSettings,
    *,
    seen_hashes: frozenset[str] = frozenset(),
    result_budget: int | None = None,
    fit_cache: FitCache | None = None,
) -> BatchResult:
    """Up to `settings.max_images` images made ready, trying at most `settings.candidates`.

    A refused image gives its slot to the next; an image whose SHA-256 is in `seen_hashes`
    (already in the conversation) or already attached from this result is skipped with a note.
    `result_budget` bounds the base64 text of all attached images together (a client's message
    cap): the images share it, each also within `target`'s own budget. A tall or wide capture
    becomes tiles as `settings.tall_images` says. `fit_cache` keeps results for next time.
    """
    digests: dict[int, str] = {}

    def digest_of(index: int) -> str:
        if index not in digests:
            digests[index] = hashlib.sha256(images[index]).hexdigest()
        return digests[index]

    planner = _Planner(len(images), settings, seen_hashes, digest_of, result_budget)
    while window := planner.next_window():
        job = planner.job_for(target, window)
        for index, digest in window:
            data = images[index]
            result = _cached(
                fit_cache,
                job,
                digest,
                functools.partial(process_with_digest, data, job.target, digest, job.tall),
            )
            planner.record(index, digest, result)
    return planner.result()


class ImageWorker:
    """Runs image work in its own bounded thread pool, so an event loop never waits on it.

    Threads bound how many images run at once; `memory_budget` bounds how much memory they
    take together: each image reserves its peak, predicted from its header, before it is
    decoded, so a few 64-megapixel images wait for each other instead of running together.
    `fit_cache` (one of its own by default) keeps what each image became.
    """

    def __init__(
        self,
        max_workers: int = DEFAULT_WORKERS,
        *,
        memory_budget: int = DEFAULT_MEMORY_BUDGET,
        fit_cache: FitCache | None = None,
    ) -> None:
        if max_workers < 1:
            raise ValueError("an image worker needs at least one thread")
        self._budget = MemoryBudget(memory_budget)
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="visiongate-image")
        self.fit_cache = fit_cache if fit_cache is not None else FitCache()

    async def run(self, function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
        """`function(*args)` in the pool: decoding base64, hashing, validating a large result
        share the threads (and their bound) with the images themselves."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, functools.partial(function, *args, **kwargs)
        )

    async def _hashed(self, images: Sequence[bytes]) -> list[str]:
        if sum(map(len, images)) < INLINE_BYTES:
            return _sha256_all(images)
        return await self.run(_sha256_all, images)

    async def process_image(
        self, data: bytes, target: ImageTarget
    ) -> ProcessedImage | RefusedImage:
        """`process_image` in the pool (one image, never tiles)."""
        (digest,) = await self._hashed([data])
        job = _Job(target, TallSettings("shrink"))
        result = await self._fitted(data, job, digest)
        assert not isinstance(result, TiledImage)
        return result

    async def process_images(
        self,
        images: Sequence[bytes],
        target: ImageTarget,
        settings: NativeSettings,
        *,
        seen_hashes: frozenset[str] = frozenset(),
        result_budget: int | None = None,
    ) -> BatchResult:
        """`process_images` in the pool: a window of images runs in parallel, in input order."""
        digests = await self._hashed(images)
        planner = _Planner(len(images), settings, seen_hashes, digests.__getitem__, result_budget)
        while window := planner.next_window():
            job = planner.job_for(target, window)
            results = await asyncio.gather(
                *(self._fitted(images[index], job, digest) for index, digest in window)
            )
            for (index, digest), result in zip(window, results, strict=True):
                planner.record(index, digest, result)
        return planner.result()

    async def _fitted(self, data: bytes, job: _Job, digest: str) -> Processed:
        cache = self.fit_cache
        key = FitKey(digest, job.target, job.tall)
        found = cache.get(key) if cache is not None else None
        if found is not None:
            return found
        result = await self.run(self._process, data, job, digest)
        if cache is not None:
            cache.put(key, result)
        return result

    def _process(self, data: bytes, job: _Job, digest: str) -> Processed:
        with self._budget.reserve(predicted_peak(data, job.target.max_edge_px)):
            return process_with_digest(data, job.target, digest, job.tall)

    def close(self, *, wait: bool = True) -> None:
        """Stop the threads; queued work is cancelled, running work finishes."""
        self._executor.shutdown(wait=wait, cancel_futures=True)

    def __enter__(self) -> ImageWorker:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def _sha256_all(images: Sequence[bytes]) -> list[str]:
    return [hashlib.sha256(data).hexdigest() for data in images]


_DEFAULT_LOCK: Final = threading.Lock()


@functools.cache
def _cached_default_worker() -> ImageWorker:
    return ImageWorker()


def default_worker() -> ImageWorker:
    """The process-wide worker (created on first use; one pool of DEFAULT_WORKERS threads, and
    the process's fit cache)."""
    with _DEFAULT_LOCK:
        return _cached_default_worker()


async def process_images_async(
    images: Sequence[bytes],
    target: ImageTarget,
    settings: NativeSettings,
    *,
    seen_hashes: frozenset[str] = frozenset(),
    result_budget: int | None = None,
) -> BatchResult:
    """`process_images` on the default worker's threads; the event loop stays responsive."""
    return await default_worker().process_images(
        images, target, settings, seen_hashes=seen_hashes, result_budget=result_budget
    )
