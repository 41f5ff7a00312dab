"""The living catalog: a refreshed copy of models.dev's `api.json` beside the bundled snapshot.

`visiongate catalog update` fetches the catalog (default `https://models.dev/api.json`;
`VISIONGATE_CATALOG_URL` or `--url` overrides), checks that it is shaped like the bundled
snapshot (`{provider: {models: {model: {modalities: {input: [...]}}}}}`), reduces it to what
the gate reads and stores it, atomically, in the facts cache
(`$VISIONGATE_FACTS_CACHE`, else `$XDG_CACHE_HOME/visiongate/facts`) with its date and
source. A fetch that fails, hangs past its deadline, grows past `MAX_BYTES` or is not a
catalog raises `CatalogUpdateError` and leaves the stored copy as it was.

Deciding never fetches: `current_catalog()` reads the newest valid of {bundled snapshot,
refreshed copy} from disk, comparing their dates from the first line of each file (the
snapshot format puts `_source` and `_fetched` first), so only one of them is parsed.

A long-running process (the proxy) refreshes in the background (`CatalogRefresher`): a
daemon thread wakes when the refreshed copy is older than the TTL (default 24 h), fetches
with a hard deadline, and on success swaps the resolver's catalog (the memo is dropped). A
failure keeps the catalog in use, is logged in one line, and the next attempt waits longer
(from 5 minutes, doubling, capped at the TTL). Offline costs a logged line per attempt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import urlsplit

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._files import read_regular_file

from .._diagnostics import PolicyError
from .._files import bundled_data, replace_file
from ._catalog import ModelCatalog
from ._catalog_read import BUNDLED_FILE, source_date
from ._fetch import FetchError, JsonTooDeep, bounded_request, parse_json
from ._tables import facts_cache_dir, refreshed_path

if TYPE_CHECKING:
    from datetime import datetime

    from ._catalog_changes import Change

__all__ = [
    "DEFAULT_TTL",
    "DEFAULT_URL",
    "CatalogRefresher",
    "CatalogUpdateError",
    "Updated",
    "catalog_url",
    "current_catalog",
    "facts_cache_dir",
    "refreshed_path",
    "update_catalog",
]

DEFAULT_URL: Final = "https://models.dev/api.json"
URL_ENV: Final = "VISIONGATE_CATALOG_URL"
MAX_BYTES: Final = 32 * 1024 * 1024
"""The largest answer taken (models.dev's whole api.json is a few MB)."""
DEADLINE: Final = 30.0
"""Seconds a fetch may take in all, connecting and reading included."""
_HEAD: Final = 4096
_LOG: Final = logging.getLogger("visiongate")


class CatalogUpdateError(VisiongateError):
    """A fetch that did not give a usable catalog; the stored one is unchanged."""


def catalog_url(url: str | None = None) -> str:
    return url or os.environ.get(URL_ENV) or DEFAULT_URL


@dataclass(frozen=True)
class Updated:
    """What `update_catalog` stored."""

    path: Path
    url: str
    date: str
    """The fetch time, ISO 8601 in UTC."""
    providers: int
    models: int
    new_models: tuple[str, ...]
    """`provider/model` ids the catalog in use before did not list."""
    changes: tuple[Change, ...] = ()
    """Every model gained, lost or whose image input changed, against the catalog before."""


# -- choosing the catalog in use --------------------------------------------------------------

_lock = threading.Lock()
_loaded: dict[tuple[str, int, int], ModelCatalog] = {}


def current_catalog(cache: Path | None = None) -> ModelCatalog:
    """The newest valid of the bundled snapshot and the refreshed copy (no network)."""
    path = refreshed_path(cache)
    try:
        status = path.stat()
    except OSError:
        return ModelCatalog.bundled()
    key = (str(path), status.st_mtime_ns, status.st_size)
    with _lock:
        found = _loaded.get(key)
    if found is not None:
        return found
    chosen = _choose(path)
    with _lock:
        _loaded.clear()  # one refreshed file is in use at a time
        _loaded[key] = chosen
    return chosen


def _choose(path: Path) -> ModelCatalog:
    bundled_date = _bundled_stamp()
    fetched = _fetched_stamp(path)
    if not fetched or fetched <= bundled_date:
        return ModelCatalog.bundled()
    try:
        return _load_refreshed(path)
    except (OSError, PolicyError, ValueError) as error:
        _LOG.warning(
            "visiongate: refreshed catalog %s unusable, using the bundled one: %s", path, error
        )
        return ModelCatalog.bundled()


def _load_refreshed(path: Path) -> ModelCatalog:
    text = read_regular_file(path, MAX_BYTES).decode("utf-8")
    document = parse_json(text, walk=False)  # written here, after `update_catalog` checked it
    meta = document.get("_fetched") if isinstance(document, dict) else None
    if not isinstance(meta, dict):
        raise ValueError("no `_fetched` note")
    date = str(meta.get("date", ""))[:10]
    label = f"models.dev fetched {date} from {_host(str(meta.get('url', '')))}"
    catalog = ModelCatalog.from_document(document, str(path), label, origin="refreshed")
    return replace(catalog, date=date)


def _bundled_stamp() -> str:
    """The bundled snapshot's revision time, UTC, from its `_source` line (the file's first
    entry), read without parsing the snapshot: choosing must not load both catalogs."""
    with bundled_data(BUNDLED_FILE).open(encoding="utf-8") as stream:
        head = stream.read(_HEAD)
    for line in head.splitlines()[1:3]:
        if line.startswith('"_source":'):
            source = json.loads(line.removeprefix('"_source":').rstrip(","))
            return _utc(_stamp_of(str(source)))
    return ""


def _fetched_stamp(path: Path) -> str:
    """The refreshed copy's fetch time, UTC, read from the head of the file only."""
    try:
        # Looked at before it is opened: a FIFO put in the cache must not block a decision.
        head = read_regular_file(path, _HEAD, whole=False).decode("utf-8", "ignore")
    except OSError:
        return ""
    for line in head.splitlines()[1:4]:
        if line.startswith('"_fetched":'):
            try:
                meta = json.loads(line.removeprefix('"_fetched":').rstrip(","))
            except json.JSONDecodeError:
                return ""
            return _utc(str(meta.get("date", ""))) if isinstance(meta, dict) else ""
    return ""


def _stamp_of(source: str) -> str:
    words = [word for word in source.split() if source_date(word)]
    return words[-1] if words else ""


def _utc(stamp: str) -> str:
    from datetime import UTC, datetime  # choosing a refreshed copy's only (2 ms, issue 37)

    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _host(url: str) -> str:
    parts = urlsplit(url)
    return (parts.netloc + parts.path) if parts.netloc else url


# -- updating -------------------------------------------------------------------------------


def update_catalog(
    url: str | None = None,
    *,
    cache: Path | None = None,
    deadline: float = DEADLINE,
    max_bytes: int = MAX_BYTES,
    now: datetime | None = None,
    accept_shrink: bool = False,
) -> Updated:
    """Fetch, check and store the catalog; raise `CatalogUpdateError` (one line) otherwise,
    and when it would drop most of the catalog in use (unless `accept_shrink`)."""
    from datetime import UTC, datetime

    from ._catalog_changes import catalog_changes, shrink

    url = catalog_url(url)
    before = current_catalog(cache)
    try:
        answer = bounded_request(
            "GET", url, deadline=deadline, max_bytes=max_bytes, follow_redirects=True
        )
    except FetchError as error:
        message = str(error)
        if message.endswith("MiB"):
            message += ", which no catalog needs"
        raise CatalogUpdateError(message) from error
    if answer.status != 200:
        raise CatalogUpdateError(f"{url} answered HTTP {answer.status}")
    body = answer.body
    document = _parsed(body, url)
    try:
        checked = ModelCatalog.from_document(document, url)
    except PolicyError as error:
        first = error.diagnostics[0].message if error.diagnostics else "wrong shape"
        raise CatalogUpdateError(f"{url} is not a models.dev catalog: {first}") from error
    changes = catalog_changes(before, checked)
    dropped = shrink(before, checked, changes)
    if dropped.too_far and not accept_shrink:
        raise CatalogUpdateError(
            f"{url} is refused: {dropped.line()} (`--accept-shrink` stores it anyway)"
        )
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    document = {key: value for key, value in document.items() if key != "_fetched"}
    document["_fetched"] = {
        "date": stamp,
        "url": url,
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    document.setdefault("_source", f"models.dev api.json fetched from {url} at {stamp}")
    path = refreshed_path(cache)
    path.parent.mkdir(parents=True, exist_ok=True)
    from ._catalog_snapshot import snapshot_text

    replace_file(path, snapshot_text(document).encode("utf-8"), prefix=".catalog-", sync=True)
    return Updated(
        path,
        url,
        stamp,
        len(checked.providers),
        checked.model_count,
        tuple(change.model for change in changes if change.change == "gained"),
        changes,
    )


def _parsed(body: bytes, url: str) -> dict[str, Any]:
    try:
        document = parse_json(body)
    except JsonTooDeep as error:
        raise CatalogUpdateError(f"{url} answered {error}, which no catalog needs") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CatalogUpdateError(f"{url} did not answer with JSON") from error
    if not isinstance(document, dict):
        raise CatalogUpdateError(f"{url} is not a models.dev catalog: not an object of providers")
    return document


# -- refreshing in the background -----------------------------------------------------------

DEFAULT_TTL: Final = 24 * 3600.0
FIRST_BACKOFF: Final = 300.0


class CatalogUser(Protocol):
    """What the refresher keeps fresh: a `FactResolver` (which imports this module)."""

    catalog: ModelCatalog

    def use_catalog(self, catalog: ModelCatalog) -> None: ...


class CatalogRefresher:
    """Keeps `resolver`'s catalog fresh from a daemon thread; `start()`, then `stop()`."""

    def __init__(
        self,
        resolver: CatalogUser,
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
