"""Refreshing the catalog in the background of a long-running process (the proxy).

Off the decide path: a daemon thread wakes when the refreshed copy is older than the TTL
(default 24 h), fetches with a hard deadline, and on success swaps the resolver's catalog
(decisions already in flight finish on the old one; the memo is dropped). A failure keeps
the catalog in use, is logged in one line, and the next attempt waits longer (backoff from
5 minutes, doubling, capped at the TTL). Offline is the normal case and costs nothing but a
logged line per attempt.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ._catalog_store import (
    DEADLINE,
    CatalogUpdateError,
    current_catalog,
    refreshed_path,
    update_catalog,
)
from ._resolver import FactResolver

__all__ = ["DEFAULT_TTL", "CatalogRefresher"]

DEFAULT_TTL: Final = 24 * 3600.0
FIRST_BACKOFF: Final = 300.0
_LOG: Final = logging.getLogger("visiongate")


class CatalogRefresher:
    """Keeps `resolver`'s catalog fresh from a daemon thread; `start()`, then `stop()`."""

    def __init__(
        self,
        resolver: FactResolver,
        *,
        ttl: float = DEFAULT_TTL,
        deadline: float = DEADLINE,
        url: str | None = None,
        cache: Path | None = None,
        first_backoff: float = FIRST_BACKOFF,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.resolver = resolver
        self.ttl = ttl
        self.deadline = deadline
        self.url = url
        self.cache = cache
        self.first_backoff = first_backoff
        self.clock = clock
        self.failures = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wait_time(self) -> float:
        """Seconds until the next attempt: the copy's remaining TTL, or the backoff."""
        if self.failures:
            backoff = self.first_backoff * 2.0 ** (self.failures - 1)
            return float(min(backoff, max(self.ttl, 1.0)))
        try:
            age = self.clock() - refreshed_path(self.cache).stat().st_mtime
        except OSError:
            return 0.0
        return max(0.0, self.ttl - age)

    def run_once(self) -> bool:
        """One attempt; True when the catalog was refreshed and is in use."""
        try:
            update_catalog(self.url, cache=self.cache, deadline=self.deadline)
        except (CatalogUpdateError, OSError) as error:
            self.failures += 1
            self.last_error = str(error)
            _LOG.warning(
                "visiongate: catalog refresh failed (%s); keeping %s, next try in %.0f s",
                error,
                self.resolver.catalog.label,
                self.wait_time(),
            )
            return False
        self.failures, self.last_error = 0, None
        self.resolver.use_catalog(current_catalog(self.cache))
        return True

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="visiongate-catalog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.wait_time()):
            self.run_once()
