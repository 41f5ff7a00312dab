"""The images of one tool result: at most N attached, tried in order, off the loop if async.

A worker pool bounds how many images are processed at once, not how much memory they take: a
64-megapixel image needs hundreds of MB, a screenshot a few. So each image also reserves its
peak memory, predicted from its header, from the worker's budget before it is decoded, and
gives it back when done: large images wait for each other while small ones keep flowing. An
image predicted to need more than the whole budget still runs, alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import io
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import TracebackType
from typing import Final, ParamSpec, TypeVar

from PIL import Image

from visiongate.engine import NativeSettings

from ._decode import MAX_SOURCE_PIXELS, decodes_directly, fitted_size
from ._process import base64_length, process_with_digest
from ._sniff import DECODABLE, sniff_media_type
from ._types import BatchResult, ImageTarget, ProcessedImage, RefusedImage, SkippedImage

_P = ParamSpec("_P")
_R = TypeVar("_R")

DEFAULT_WORKERS: Final = 2
"""Threads of the default worker: Pillow releases the GIL while it decodes, resizes and encodes."""
DEFAULT_MEMORY_BUDGET: Final = 1 << 30
"""Bytes of predicted peak memory that one worker lets run at once (1 GiB)."""

PEAK_FACTOR: Final = 2.0
"""Peak over width x height x 4 bytes, the goal for every format but WebP: measured 1.5 at
most for PNG, GIF and the rest (bench/bench_image_memory.py)."""
WEBP_PEAK_FACTOR: Final = 4.5
"""An animated WebP (or any WebP when libwebp cannot be loaded) peaks at 4.0 inside Pillow's
decode alone: libwebp's animation decoder, the only one Pillow uses, keeps two canvases and
returns a third copy, which Pillow copies once more."""
WEBP_STILL_PEAK_FACTOR: Final = 2.3
"""A still WebP is decoded by libwebp's simple API straight into the frame: measured 2.27 at
most (lossy with a gradient alpha, whose plane libwebp decodes through a 4-byte buffer of its
own), 2.04 for a many-coloured lossless image, 1.30 for few colours."""
PROGRESSIVE_FACTOR: Final = 1.0
"""A progressive JPEG's coefficients stay in memory at full size, whatever the draft scale
(measured 0.9)."""
_FLOOR: Final = 1 << 20
_MIN_SHARE: Final = 4
"""The smallest per-image budget a share can give (ImageTarget's own minimum): an image that
cannot fit in it is refused with the stage's reason, never attached over the budget."""


def predicted_peak(data: bytes, max_edge: int) -> int:
    """Bytes the stage is predicted to need at its peak for `data`, from the header alone.

    Data whose header cannot be read will be refused right after decoding starts; it is
    predicted to need little.
    """
    media_type = sniff_media_type(data)
    if media_type not in DECODABLE:
        return _FLOOR
    try:
        with Image.open(io.BytesIO(data), formats=[DECODABLE[media_type]]) as image:
            full = min(image.width * image.height, MAX_SOURCE_PIXELS) * 4
            if image.format not in ("JPEG", "MPO"):
                return max(_FLOOR, int(full * _peak_factor(data, image)))
            progressive = bool(image.info.get("progressive") or image.info.get("progression"))
            image.draft(None, fitted_size(image.width, image.height, max_edge))
            drafted = min(image.width * image.height, MAX_SOURCE_PIXELS) * 4  # libjpeg's size
    except (OSError, SyntaxError, ValueError, EOFError, Image.DecompressionBombError):
        return _FLOOR
    coefficients = full * PROGRESSIVE_FACTOR if progressive else 0
    return max(_FLOOR, int(drafted * PEAK_FACTOR + coefficients))


def _peak_factor(data: bytes, image: Image.Image) -> float:
    if image.format != "WEBP":
        return PEAK_FACTOR
    return WEBP_STILL_PEAK_FACTOR if decodes_directly(data, image) else WEBP_PEAK_FACTOR


class MemoryBudget:
    """Bytes that reservations may hold at once; callers wait until theirs fits."""

    def __init__(self, total: int) -> None:
        if total < 1:
            raise ValueError("a memory budget must be positive")
        self.total = total
        self._free = total
        self._changed = threading.Condition()

    @contextmanager
    def reserve(self, amount: int) -> Iterator[None]:
        """Hold `amount` bytes (at most the whole budget) for the duration of the block."""
        amount = max(0, min(amount, self.total))
        with self._changed:
            self._changed.wait_for(lambda: self._free >= amount)
            self._free -= amount
        try:
            yield
        finally:
            with self._changed:
                self._free += amount
                self._changed.notify_all()

    @property
    def reserved(self) -> int:
        """Bytes held right now."""
        with self._changed:
            return self.total - self._free


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

    def target_for(self, target: ImageTarget, window: Sequence[tuple[int, str]]) -> ImageTarget:
        """`target` for the images of `window`: its per-image budget, or their equal share of
        what is left of the result budget when that is smaller."""
        if self._left is None or not window:
            return target
        slots = self._settings.max_images - len(self._attached)
        expected = max(1, min(slots, len(window) + self._count - self._cursor))
        share = max(_MIN_SHARE, self._left // expected)
        if share >= target.budget_base64:
            return target
        return dataclasses.replace(target, budget_base64=share)

    def record(self, index: int, digest: str, result: ProcessedImage | RefusedImage) -> None:
        """Note what became of a candidate from the last window."""
        self._tried += 1
        if isinstance(result, ProcessedImage):
            if self._left is not None:
                self._left = max(0, self._left - base64_length(len(result.data)))
            self._attached.append((index, result))
            self._attached_at.setdefault(digest, index)
        else:
            self._refused.append((index, result))

    def result(self) -> BatchResult:
        """The batch outcome; images past the cursor were never looked at."""
        return BatchResult(
            attached=tuple(image for _, image in self._attached),
            refused=tuple(self._refused),
            skipped=tuple(self._skipped),
            not_tried=tuple(range(self._cursor, self._count)),
            attached_indexes=tuple(index for index, _ in self._attached),
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


def process_images(
    images: Sequence[bytes],
    target: ImageTarget,
    settings: NativeSettings,
    *,
    seen_hashes: frozenset[str] = frozenset(),
    result_budget: int | None = None,
) -> BatchResult:
    """Up to `settings.max_images` images made ready, trying at most `settings.candidates`.

    A refused image gives its slot to the next; an image whose SHA-256 is in `seen_hashes`
    (already in the conversation) or already attached from this result is skipped with a note.
    `result_budget` bounds the base64 text of all attached images together (a client's message
    cap): the images share it, each also within `target`'s own budget.
    """
    digests: dict[int, str] = {}

    def digest_of(index: int) -> str:
        if index not in digests:
            digests[index] = hashlib.sha256(images[index]).hexdigest()
        return digests[index]

    planner = _Planner(len(images), settings, seen_hashes, digest_of, result_budget)
    while window := planner.next_window():
        shared = planner.target_for(target, window)
        for index, digest in window:
            planner.record(index, digest, process_with_digest(images[index], shared, digest))
    return planner.result()


class ImageWorker:
    """Runs image processing in its own bounded thread pool, so an event loop never waits on it.

    Threads bound how many images run at once; `memory_budget` bounds how much memory they
    take together: each image reserves its peak, predicted from its header, before it is
    decoded, so a few 64-megapixel images wait for each other instead of running together.
    """

    def __init__(
        self, max_workers: int = DEFAULT_WORKERS, *, memory_budget: int = DEFAULT_MEMORY_BUDGET
    ) -> None:
        if max_workers < 1:
            raise ValueError("an image worker needs at least one thread")
        self._budget = MemoryBudget(memory_budget)
        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="visiongate-image")

    async def process_image(
        self, data: bytes, target: ImageTarget
    ) -> ProcessedImage | RefusedImage:
        """`process_image` in the pool."""
        digest = await self._run(_sha256, data)
        return await self._run(self._process, data, target, digest)

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
        digests = await self._run(_sha256_all, images)
        planner = _Planner(len(images), settings, seen_hashes, digests.__getitem__, result_budget)
        while window := planner.next_window():
            shared = planner.target_for(target, window)
            results = await asyncio.gather(
                *(
                    self._run(self._process, images[index], shared, digest)
                    for index, digest in window
                )
            )
            for (index, digest), result in zip(window, results, strict=True):
                planner.record(index, digest, result)
        return planner.result()

    def _process(
        self, data: bytes, target: ImageTarget, digest: str
    ) -> ProcessedImage | RefusedImage:
        with self._budget.reserve(predicted_peak(data, target.max_edge_px)):
            return process_with_digest(data, target, digest)

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

    async def _run(self, function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, functools.partial(function, *args, **kwargs)
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_all(images: Sequence[bytes]) -> list[str]:
    return [_sha256(data) for data in images]


_DEFAULT_LOCK: Final = threading.Lock()


@functools.cache
def _cached_default_worker() -> ImageWorker:
    return ImageWorker()


def default_worker() -> ImageWorker:
    """The process-wide worker (created on first use; one pool of DEFAULT_WORKERS threads)."""
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
