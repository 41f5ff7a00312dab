"""The backends `auxiliary.vision` names, one per main provider and model, kept once built.

`backend_from_config` depends on the main model only for `provider: main`, but each backend
holds its description cache, so one is built per main model and reused. A `Router` keeps a
pool of its own; the gateway shares one among its sessions, so a local OCR engine loads its
models once per process, not once per session (its cache is keyed by the image's bytes, so a
session learns nothing it did not send itself).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Final

from ._cache import CachedVisionBackend
from ._config import backend_from_config

__all__ = ["BackendPool"]

DEFAULT_KEPT: Final = 32


class BackendPool:
    """At most `kept` backends, the oldest dropped first; safe to share between threads."""

    def __init__(self, kept: int = DEFAULT_KEPT) -> None:
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
        backend = backend_from_config(config, main_provider=provider, main_model=model)
        with self._lock:
            if len(self._backends) >= self._kept and key not in self._backends:
                del self._backends[next(iter(self._backends))]
            return self._backends.setdefault(key, backend)
