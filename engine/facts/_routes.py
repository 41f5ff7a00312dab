"""Routes learned at run time or settled by a probe: a small local overlay over the registry.

When a provider rejects images inside a tool result, an agent calls
`gate.report_refusal(provider, model, evidence)`; `visiongate probe --save` records what an
experiment showed. Both land in one JSON file (by default
`$XDG_STATE_HOME/visiongate/routes.json`), and later decisions resolve the `path` fact from
it before anything else, with provenance such as `learned 2026-09-01: <evidence>`.

Several agent processes may share the file: every change is a read-modify-write under an
exclusive lock on a sidecar `.lock` file (`_platform.exclusive`: `flock`, or an owner file
where the system has no `fcntl`), written to a temporary file and renamed into place,
so readers (who take no lock) always see a whole file. Readers notice another process's
change by the file's size and modification time, looked at most once per second.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final, Literal

from visiongate.kernel._display import one_line
from visiongate.kernel._files import check_regular, read_regular_file
from visiongate.kernel._platform import exclusive

from .._diagnostics import Diagnostic, Location, PolicyError
from .._files import replace_file
from .._yaml import DEFAULT_LIMITS
from ._keys import model_id, provider_key, route_key
from ._tables import default_routes_path

__all__ = ["LearnedRoute", "RouteOverlay", "check_routes_file", "default_routes_path"]

SCHEMA_VERSION: Final = 1
CHECK_INTERVAL: Final = 1.0
"""Seconds between looks at the file for another process's change."""
_DETAIL_LIMIT: Final = 300
_SECRETS: Final = re.compile(
    r"data:[\w.+-]*/[\w.+-]*;base64,[A-Za-z0-9+/=_-]*"  # an echoed image
    r"|[A-Za-z0-9+/=_-]{64,}"  # any long base64 run
    r"|(?i:bearer)\s+\S+"  # an echoed authorization header
    r"|\b(?:sk|xai|gsk|AIza)[-_A-Za-z0-9]{16,}"  # API-key shaped tokens
)

Verdict = Literal["accepts", "refuses"]


def check_routes_file(path: str | Path, location: Location | None) -> None:
    """`PolicyError` (an unreadable file: exit 2) when the routes file at `path` is there but
    no regular file: a directory, a FIFO, a device. `location` is where an agent config names
    it (`visiongate.routes_file`), None when a caller did. A missing file is fine (no route is
    known yet); a file that goes bad later is the overlay's `problem`, never a decision's error.
    One line, with no help: what to fix is in the message."""
    try:
        check_regular(os.stat(path), path)
    except FileNotFoundError:
        return
    except OSError as error:
        why = error.strerror or str(error)
        why = why[:1].lower() + why[1:]
        shown = one_line(str(path), 200)
        message = (
            f"`visiongate.routes_file` names `{shown}`, which cannot be read: {why}"
            if location is not None
            else f"cannot read the routes file `{shown}`: {why}"
        )
        raise PolicyError(
            [
                Diagnostic(
                    "unreadable-file",
                    "error",
                    message,
                    location or Location(shown),
                    ("visiongate", "routes_file") if location is not None else (),
                )
            ]
        ) from None


def clean_detail(text: str) -> str:
    """Evidence as one short line with image data and anything key-shaped removed."""
    return one_line(str(text), _DETAIL_LIMIT, redact=((_SECRETS, "(redacted)"),))


@dataclass(frozen=True)
class LearnedRoute:
    """One (provider, model) verdict recorded on this machine."""

    provider: str
    """The registry id (aliases resolved)."""
    model: str
    verdict: Verdict
    how: Literal["learned", "probed"]
    date: str
    """`YYYY-MM-DD`, UTC."""
    detail: str
    """What showed it: the provider's error, or what the probe saw."""

    @property
    def provenance(self) -> str:
        return f"{self.how} {self.date}: {self.detail}"

    @property
    def key(self) -> tuple[str, str]:
        return route_key(self.provider, self.model)

    @classmethod
    def today(
        cls,
        provider: str,
        model: str,
        verdict: Verdict,
        how: Literal["learned", "probed"],
        detail: str,
    ) -> LearnedRoute:
        from datetime import UTC, datetime  # a learner's only (2 ms of a `decide`, issue 37)

        date = datetime.now(UTC).strftime("%Y-%m-%d")
        return cls(
            provider_key(provider), model_id(model), verdict, how, date, clean_detail(detail)
        )


class RouteOverlay:
    """The overlay file, read lazily; `path=None` keeps nothing (for tests and tooling)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._routes: dict[tuple[str, str], LearnedRoute] = {}
        self._signature: tuple[int, int] | None = None
        self._checked = float("-inf")
        self.version = 0
        """Grows whenever what the overlay says changes (the fact resolver's memo follows it)."""
        self.problem: str | None = None
        """Why the file could not be read, when it could not; it is then treated as empty."""

    @property
    def label(self) -> str:
        return self.path.name if self.path is not None else "routes"

    def refresh(self) -> int:
        """Re-read the file if another process changed it (looked at once per second at most);
        returns `version`."""
        if self.path is None:
            return self.version
        now = time.monotonic()
        if now - self._checked < CHECK_INTERVAL:
            return self.version
        with self._lock:
            self._checked = now
            self._load_if_changed()
        return self.version

    def find(self, provider: str, *models: str) -> LearnedRoute | None:
        """The recorded verdict for a provider and the first of `models` that has one."""
        self.refresh()
        routes = self._routes
        if not routes:
            return None
        for model in models:
            found = routes.get(route_key(provider, model))
            if found is not None:
                return found
        return None

    def entries(self) -> tuple[LearnedRoute, ...]:
        self._checked = float("-inf")
        self.refresh()
        return tuple(sorted(self._routes.values(), key=lambda route: route.key))

    def record(self, route: LearnedRoute) -> None:
        """Add or replace the verdict for its (provider, model), safely across processes."""
        with self._changing() as routes:
            routes[route.key] = route

    def forget(self, provider: str, model: str) -> bool:
        """Remove the verdict for a provider and model; False when there was none."""
        with self._changing() as routes:
            return routes.pop(route_key(provider, model), None) is not None

    # -- the file -------------------------------------------------------------------------------

    @contextmanager
    def _changing(self) -> Iterator[dict[tuple[str, str], LearnedRoute]]:
        if self.path is None:
            raise ValueError("no routes file is configured, so nothing can be recorded")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with self._lock, exclusive(lock_path):
            routes = _parse(self._read_text())
            yield routes
            self._write(routes)
            self._signature = None
            self._load_if_changed()

    def _read_text(self) -> str:
        """The file's text ("" when there is none yet): a regular file of at most 8 MiB,
        opened without blocking (a FIFO at the path would wait for a writer for ever);
        `OSError` saying why otherwise."""
        assert self.path is not None
        try:
            data = read_regular_file(self.path, DEFAULT_LIMITS.max_bytes)
        except FileNotFoundError:
            return ""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise OSError(0, "not UTF-8 text", str(self.path)) from None

    def _write(self, routes: dict[tuple[str, str], LearnedRoute]) -> None:
        assert self.path is not None
        document = {
            "schema_version": SCHEMA_VERSION,
            "routes": [asdict(route) for route in sorted(routes.values(), key=lambda r: r.key)],
        }
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        replace_file(self.path, text.encode("utf-8"), prefix=".routes-", sync=True)

    def _load_if_changed(self) -> None:
        assert self.path is not None
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            signature = None
        else:
            signature = (stat.st_mtime_ns, stat.st_size)
        if signature == self._signature and signature is not None:
            return
        self._signature = signature
        try:
            routes = _parse(self._read_text()) if signature is not None else {}
            self.problem = None
        except ValueError as error:
            # A damaged file must not stop decisions: it counts as empty, and says why.
            routes, self.problem = {}, f"`{self.path}` is not a routes file: {error}"
        except OSError as error:  # a directory, a FIFO, a device, too large: the same
            why = error.strerror or str(error)
            routes, self.problem = {}, f"`{self.path}` cannot be read as a routes file: {why}"
        if routes != self._routes:
            self._routes = routes
            self.version += 1


def _parse(text: str) -> dict[tuple[str, str], LearnedRoute]:
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg.lower()})") from error
    items = document.get("routes") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError("expected an object with a `routes` list")
    routes = [_route(item) for item in items]
    return {route.key: route for route in routes if route is not None}


def _route(item: Any) -> LearnedRoute | None:
    """One entry, or None when it is not usable (it is then dropped at the next write)."""
    fields = ("provider", "model", "verdict", "how", "date", "detail")
    if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
        return None
    if item["verdict"] not in ("accepts", "refuses") or item["how"] not in ("learned", "probed"):
        return None
    return LearnedRoute(**{name: item[name] for name in fields})
