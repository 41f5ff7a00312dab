"""Fact tables kept between processes: the loaded catalog and registry, by content hash.

A command line loads the bundled catalog (800 KB of JSON) and provider registry (YAML checked
with cerberus) for its one decision, and exits: that was most of `visiongate decide`'s time
(issue 37). An entry keeps what loading built, the catalog's and registry's own frozen
objects with their indexes, so the next process reads them back in one step.

- Keyed by the sha256 of the source text and of what read it (the kind, its label) and a
  fingerprint of the engine and of this package's modules: an edited registry, a refreshed
  catalog or an upgraded (or edited) engine never meets a stale entry, it builds a new one.
  A file shipped with the package (`cached_bundled_table`) is keyed by its path, size and
  modification time instead (the fingerprint holds the package version): a hit neither
  reads nor hashes the 800 KB snapshot (7 ms of a `decide`, measured by decide8x); a changed
  file has another stat, so another entry.
- Beside the compile cache (`VISIONGATE_POLICY_CACHE`, default
  `$XDG_CACHE_HOME/visiongate/policies`), in `facts/`; off when that cache is off.
- Validated before use: the file holds a format line, the sha256 of its body and the body, a
  pickle that may name only the engine's own frozen dataclasses (and `re` patterns, and
  read-only mappings), nothing that runs code; the value must be of the expected type. An
  entry that fails any of this is refused with one warning line, the table is built from its
  source as if there were none, and the entry is written again.
- Written atomically (a temporary file renamed into place); failures to write are logged,
  never raised. Bounded: beyond `MAX_ENTRIES` files the oldest are removed.
"""

from __future__ import annotations

# `pickle.Unpickler` is `_pickle.Unpickler`: importing `pickle.py` (with `struct`) for it
# would cost a `decide` ~1.4 ms (issue 37).
import _pickle
import copyreg
import dataclasses
import functools
import gc
import io
import os
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, TypeVar

from visiongate.kernel._digest import blake2b, sha256
from visiongate.kernel._lazy import lazy_logger

from .._compile_cache import cache_directory, engine_fingerprint
from .._files import bundled_data, keep_newest, module_sources, replace_file

__all__ = [
    "BUNDLED_CATALOG",
    "CACHE_ENV",
    "MAX_ENTRIES",
    "bundled_identity",
    "cached_bundled_table",
    "cached_table",
    "default_routes_path",
    "facts_cache_dir",
    "recall_entry",
    "refreshed_path",
    "remember_entry",
]

logger = lazy_logger("visiongate")  # `logging` only if something goes wrong (issue 37)

CACHE_ENV: Final = "VISIONGATE_FACTS_CACHE"
BUNDLED_CATALOG: Final = "catalog/models-dev.json"
"""The models.dev snapshot in `visiongate.policies` (`_catalog_read.BUNDLED_FILE`)."""

FORMAT: Final = b"visiongate fact table 1\n"
MAX_ENTRIES: Final = 16
_DIGEST: Final = sha256().digest_size
_T = TypeVar("_T")


def cached_table(
    kind: str,
    text: str,
    build: Callable[[], _T],
    expected: type[_T],
) -> _T:
    """The table `build` makes from `text`, read back from its entry when there is a sound one."""
    return _cached(_entry_path(kind.encode() + b"\0" + _encoded(text)), build, expected)


def cached_bundled_table(
    kind: str, name: str, build: Callable[[str], _T], expected: type[_T]
) -> _T:
    """The table `build` makes from the text of `name`, a file of `visiongate.policies`,
    keyed by the file's path, size and modification time: read only when the table is."""
    source = bundled_data(name)
    identity = bundled_identity(name)
    if identity is None:  # a zipped installation: no stat, keyed by content
        text = source.read_text("utf-8")
        return cached_table(kind, text, lambda: build(text), expected)
    # `\1`, not the `\0` of a content key: no text can stand for a file's identity.
    path = _entry_path(kind.encode() + b"\1" + _encoded(identity))
    return _cached(path, lambda: build(source.read_text("utf-8")), expected)


def bundled_identity(name: str) -> str | None:
    """The path, size and modification time of a bundled file; None when it is no file on
    disk (a zipped installation)."""
    source = bundled_data(name)
    if not isinstance(source, Path):
        return None
    status = source.stat()
    return f"{source}\0{status.st_size}\0{status.st_mtime_ns}"


def recall_entry(folder: str, key: bytes, expected: type[_T]) -> _T | None:
    """The sound entry stored in `facts/<folder>` under `key` (with the engine's
    fingerprint), else None; a damaged one is refused with one warning line."""
    path = _entry_path(key, folder)
    return None if path is None else _recall(path, expected)


def remember_entry(folder: str, key: bytes, value: object, keep: int) -> None:
    """Store `value` under `key`, the folder kept to its newest `keep` entries; failures to
    write are logged, never raised."""
    path = _entry_path(key, folder)
    if path is not None:
        _remember(path, value, keep)


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _cached(path: Path | None, build: Callable[[], _T], expected: type[_T]) -> _T:
    if path is None:
        return build()
    found = _recall(path, expected)
    if found is not None:
        return found
    table = build()
    _remember(path, table)
    return table


def _entry_path(key: bytes, folder: str = "") -> Path | None:
    directory = cache_directory()
    if directory is None:
        return None
    try:
        fingerprint = _fingerprint()
    except OSError as error:  # an installation whose modules cannot be read back
        logger.debug("visiongate: fact tables off, no engine fingerprint: %s", error)
        return None
    digest = sha256(key)
    return directory / "facts" / folder / f"{digest.hexdigest()[:32]}-{fingerprint}.table"


@functools.lru_cache(maxsize=1)  # one engine per process
def _fingerprint() -> str:
    from visiongate.kernel import shapes  # its `Limits` are in the registry's entries

    digest = blake2b(engine_fingerprint().encode())
    for folder in (Path(__file__).parent, Path(shapes.__file__).parent):
        for name, source in module_sources(folder, lambda _subfolder: True):
            digest.update(name.encode() + b"\0" + source)
    return digest.hexdigest()[:24]


def _recall(path: Path, expected: type[_T]) -> _T | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        logger.debug("visiongate: fact table %s unreadable: %s", path, error)
        return None
    try:
        table = _parse(raw)
        if not isinstance(table, expected):
            raise ValueError(f"it holds {type(table).__name__}, not {expected.__name__}")
    except Exception as error:  # whatever a damaged file raises, it is refused (and logged)
        logger.warning("visiongate: fact table %s refused, built again: %s", path, error)
        return None
    return table


def _parse(raw: bytes) -> object:
    if not raw.startswith(FORMAT):
        raise ValueError("not a fact table of this format")
    digest, body = raw[len(FORMAT) : len(FORMAT) + _DIGEST], raw[len(FORMAT) + _DIGEST :]
    if sha256(body).digest() != digest:
        raise ValueError("its checksum does not match (a damaged or truncated file)")
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of objects, none of them garbage: no pass is of use
    try:
        return _Reader(io.BytesIO(body)).load()
    finally:
        if collecting:
            gc.enable()


class _Reader(_pickle.Unpickler):  # `pickle.Unpickler` itself, without `pickle.py`
    """Names only the engine's frozen dataclasses, `re` patterns and read-only mappings."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == (__name__, "_read_only"):
            return _read_only
        if (module, name) == ("re", "_compile"):
            return super().find_class(module, name)
        if module.startswith("visiongate.") and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise _pickle.UnpicklingError(f"`{module}.{name}` is not allowed in a fact table")


def _read_only(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def _remember(path: Path, table: object, keep: int = MAX_ENTRIES) -> None:
    import pickle  # writing only: reading an entry needs the C unpickler alone (issue 37)

    buffer = io.BytesIO()
    writer = pickle.Pickler(buffer, protocol=5)
    writer.dispatch_table = {
        **copyreg.dispatch_table,
        MappingProxyType: lambda mapping: (_read_only, (dict(mapping),)),
    }
    try:
        writer.dump(table)
        body = buffer.getvalue()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = FORMAT + sha256(body).digest() + body
        replace_file(path, data, prefix=".table-", suffix=".tmp", sync=False)
        keep_newest(path.parent, "*.table", keep)
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as error:
        logger.debug("visiongate: fact table %s not written: %s", path, error)


# -- where the facts a machine keeps live (here: the pair cache checks them without
# importing the catalog store or the routes, issue 37) -------------------------------------


def facts_cache_dir() -> Path:
    """Where refreshed facts live: `$VISIONGATE_FACTS_CACHE`, else the user cache."""
    own = os.environ.get(CACHE_ENV)
    if own:
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visiongate" / "facts"


def refreshed_path(cache: Path | None = None) -> Path:
    return (cache or facts_cache_dir()) / "models-dev.json"


def default_routes_path() -> Path:
    """`$XDG_STATE_HOME/visiongate/routes.json`, else `~/.local/state/visiongate/routes.json`."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "visiongate" / "routes.json"
