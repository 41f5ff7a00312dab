"""Replacing a file whole, for the engine's own state files (the compile cache, the routes)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_file(path: Path, data: bytes, *, prefix: str, suffix: str = "", sync: bool) -> None:
    """Write `data` to a temporary sibling, then rename it over `path`: a reader (which takes
    no lock) sees the old file or the new one, never part of one. `sync` flushes the data to
    disk before the rename, for a file whose loss after a crash matters."""
    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
