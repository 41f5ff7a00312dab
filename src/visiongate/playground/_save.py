"""Save: the policy written back to the file given at start, whole or not at all.

The text is written to a temporary file beside the target, flushed to disk, given the
target's mode, and renamed over it, so a reader (the gate's watcher, an editor) sees the old
file or the new one, never part of one. A file that changed on disk since it was loaded (or
last saved here) is not overwritten unless the person says so.
"""

from __future__ import annotations

import stat
from pathlib import Path

from visiongate.engine._files import replace_file
from visiongate.kernel._errors import VisiongateError


class SaveRefused(VisiongateError):
    """The file was not written; `conflict` when it changed on disk meanwhile."""

    def __init__(self, message: str, conflict: bool = False) -> None:
        super().__init__(message)
        self.conflict = conflict


def save_policy(path: Path, text: str, expected: str, overwrite: bool) -> None:
    """Replace `path` with `text`, if it still holds `expected` (or `overwrite`)."""
    target = path.resolve()  # a symbolic link keeps pointing at the file it names
    try:
        on_disk = target.read_text(encoding="utf-8")
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        on_disk, mode = None, 0o644
    except (OSError, UnicodeDecodeError) as error:
        raise SaveRefused(f"not saved: cannot read `{path}`: {error}") from None
    if on_disk is not None and on_disk != expected and not overwrite:
        raise SaveRefused(
            f"not saved: `{path.name}` changed on disk since it was loaded; save again to "
            "overwrite it",
            conflict=True,
        )
    _replace(target, text.encode("utf-8"), mode)


def _replace(target: Path, data: bytes, mode: int) -> None:
    try:
        replace_file(target, data, prefix=f".{target.name}.", suffix=".tmp", sync=True, mode=mode)
    except OSError as error:
        raise SaveRefused(f"not saved: cannot write `{target.name}`: {error.strerror}") from None
