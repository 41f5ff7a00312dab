"""Describe each distinct image once: a bounded, thread-safe cache keyed by content hash; and
the pool of such backends, one per main model (`BackendPool`)."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from ._base import Description, VisionBackend
from ._memory import ScreenBackend, ScreenMemory

BACKENDS_KEPT: Final = 32


class CachedVisionBackend:
    """Wraps a backend; repeats of the same image bytes (and question) come from memory.

    Keys are SHA-256 digests, so no image bytes are kept. The cache holds at most
    `max_entries` descriptions and drops the least recently used. Failures are not
    cached: a backend that was down may be up on the next call. Two threads that miss on
    the same image at once both ask the backend; the later answer simply replaces the
    earlier one.
    """

    def __init__(self, inner: VisionBackend, max_entries: int = 256) -> None:
        self.inner = inner
        self.max_entries = max(1, max_entries)
        self._entries: OrderedDict[str, Description] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        """The cached description of `image`, or a fresh one from the wrapped backend."""
        started = time.perf_counter()
        key = cache_key(image, question)
        hit = self._lookup(key)
        if hit is not None:
            elapsed_ms = (time.perf_counter() - started) * 1000
            return replace(hit, cached=True, elapsed_ms=elapsed_ms)
        description = self.inner.describe(image, media_type, question=question)
        self._store(key, description)
        return description

    def describe_screen(
        self, image: bytes, media_type: str, *, memory: ScreenMemory, stream: str
    ) -> Description:
        """One screenshot of `stream`: the wrapped backend's own stream reading if it has
        one, else the cached description.

        Stream reading bypasses this cache: the memory already holds recent screenshots by
        content hash, and a description from this cache would miss what changed since the
        previous screenshot.
        """
        if isinstance(self.inner, ScreenBackend):
            return self.inner.describe_screen(image, media_type, memory=memory, stream=stream)
        return self.describe(image, media_type)

    def _lookup(self, key: str) -> Description | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
            return hit

    def _store(self, key: str, description: Description) -> None:
        with self._lock:
            self._entries[key] = description
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)


def cache_key(image: bytes, question: str | None) -> str:
    """SHA-256 of the image bytes, joined with the question's own digest when there is one."""
    key = hashlib.sha256(image).hexdigest()
    if question:
        key += ":" + hashlib.sha256(question.encode("utf-8")).hexdigest()
    return key


BuildBackend = Callable[[Mapping[str, Any], str, str], CachedVisionBackend]
"""Builds the backend the agent `config` names for a main provider and model
(`_config.pooled_backend`; its owner passes it in, as `_config` imports this module)."""


class BackendPool:
    """The backends `auxiliary.vision` names, one per main provider and model, kept once built
    by `build` (each holds its description cache): at most `kept`, the oldest dropped first;
    safe to share between threads. A `Router` keeps one; the gateway shares one among its sessions,
    so a local OCR engine loads its models once per process, not once per session (its cache
    is keyed by the image's bytes: a session learns nothing it did not send itself)."""

    def __init__(self, build: BuildBackend, kept: int = BACKENDS_KEPT) -> None:
        self._build = build
        self._kept = kept
        self._backends: dict[tuple[str, str], CachedVisionBackend] = {}
        self._lock = threading.Lock()

    def get(self, config: Mapping[str, Any], provider: str, model: str) -> CachedVisionBackend:
        """The backend for `provider` and `model` under the agent `config`; raises
        `VisionUnavailable` when the config is unusable."""
        key = (provider, model)
        with self._lock:
            found = self._backends.get(key)
        if found is not None:
            return found
        backend = self._build(config, provider, model)
        with self._lock:
            if len(self._backends) >= self._kept and key not in self._backends:
                del self._backends[next(iter(self._backends))]
            return self._backends.setdefault(key, backend)
