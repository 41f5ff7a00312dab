"""Replacing a file whole, for the engine's own state files (the compile cache, the fact
tables, the routes) and the playground's Save; keeping a cache folder to its newest entries;
reading the package's own modules for the caches' fingerprints."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from importlib.resources.abc import Traversable


def replace_file(
    path: Path,
    data: bytes,
    *,
    prefix: str,
    suffix: str = "",
    sync: bool,
    mode: int | None = None,
) -> None:
    """Write `data` to a temporary sibling, then rename it over `path`: a reader (which takes
    no lock) sees the old file or the new one, never part of one. `sync` flushes the data to
    disk before the rename, for a file whose loss after a crash matters; `mode`, when given,
    is the new file's permission bits (the temporary file's own are 0600)."""
    import tempfile  # a writer's only: a warm `decide` writes nothing (2 ms, issue 37)

    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def keep_newest(directory: Path, pattern: str, count: int) -> None:
    """Remove the oldest files of `directory` matching `pattern` beyond the newest `count`."""
    entries = list(directory.glob(pattern))
    if len(entries) <= count:
        return
    entries.sort(key=lambda item: item.stat().st_mtime)
    for stale in entries[: len(entries) - count]:
        stale.unlink(missing_ok=True)


def bundled_data(name: str = "") -> Path | Traversable:
    """A file shipped in `visiongate.policies` (the folder itself for no name), as
    `importlib.resources.files` names it.

    The package is a folder on disk in every installation but a zipped one: its path is then
    the package's own, without importing `importlib.resources`' readers (and `zipfile`
    behind them, about 7 ms of a `decide`, issue 37)."""
    from visiongate import policies

    origin = getattr(policies.__spec__, "origin", None)
    if origin and os.path.isfile(origin):
        return Path(origin).parent / name
    from importlib import resources

    root = resources.files("visiongate.policies")
    return root / name if name else root


def module_sources(folder: Path, enter: Callable[[str], bool]) -> list[tuple[str, bytes]]:
    """The `.py` files of `folder` and of the subfolders `enter` accepts (by their path from
    `folder`, `_yaml` or `config/sub`), as (that path with `/`, the bytes), sorted by path.

    With `os.scandir` and plain reads: `Path.glob` and `Path.read_bytes` cost a `decide` about
    1 ms more for the ~60 modules its two fingerprints read (issue 37)."""
    found: list[tuple[str, bytes]] = []
    folders = [("", str(folder))]
    while folders:
        prefix, where = folders.pop()
        with os.scandir(where) as entries:
            for entry in entries:
                name = prefix + entry.name
                if entry.name.endswith(".py") and entry.is_file():
                    with open(entry.path, "rb") as source:
                        found.append((name, source.read()))
                elif entry.name != "__pycache__" and entry.is_dir() and enter(name):
                    folders.append((name + "/", entry.path))
    return sorted(found)
