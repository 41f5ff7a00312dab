"""The image cache: where a tool result's images are written so `MEDIA:<path>` lines work.

Files are content-addressed (`<sha256>.<ext>`), written atomically (a temporary file in the
same directory, fsync, `os.replace`), mode 0600 in a directory of mode 0700. The cache is
write-only for the adapters: an image is attached from the bytes this call wrote, never read
back from a path, so a server cannot make the router read a file by naming it.

A file this cache wrote is not written again while it is still the file it wrote (same inode,
size, modification time and mode 0600): a server that returns the same screenshot on every
call costs one write, not an fsync per call. Anything else (a file changed, replaced, chmod-ed
or gone) is written again, which restores it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from visiongate.kernel._platform import owned_by_this_user

__all__ = [
    "CACHE_DIR_ENV",
    "UNKNOWN_EXTENSION",
    "CachedFile",
    "ImageCache",
    "default_cache_dir",
    "extension_for",
]

CACHE_DIR_ENV: Final = "VISIONGATE_CACHE_DIR"
FILE_MODE: Final = 0o600
DIR_MODE: Final = 0o700
UNKNOWN_EXTENSION: Final = ".bin"
WRITES_REMEMBERED: Final = 1024
"""Files whose identity a cache remembers, so that an unchanged one is not written again."""

_EXTENSIONS: Final = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/bmp": ".bmp",
    "image/tiff": ".tiff",
}
"""Raster formats the image stage decodes; anything else is not written to the cache."""


@dataclass(frozen=True)
class CachedFile:
    """One file this call wrote: its path, content hash and size."""

    path: Path
    sha256: str
    size: int


def default_cache_dir() -> Path:
    """`$VISIONGATE_CACHE_DIR`, else `$XDG_CACHE_HOME/visiongate/images`, else `~/.cache/...`."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visiongate" / "images"


def extension_for(media_type: str | None) -> str:
    """The file extension for a sniffed media type; `.bin` when it is not a known image."""
    return _EXTENSIONS.get(media_type or "", UNKNOWN_EXTENSION)


class ImageCache:
    """A private directory of content-addressed image files; safe to share between threads."""

    __slots__ = ("_directory", "_lock", "_written")

    def __init__(self, directory: str | Path | None = None) -> None:
        chosen = Path(directory) if directory is not None else default_cache_dir()
        # Absolute: a `MEDIA:` path is read by a client started in another directory.
        self._directory = Path(os.path.abspath(chosen.expanduser()))
        self._written: OrderedDict[Path, tuple[int, int, int, int]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        return self._directory

    def write(
        self, data: bytes, media_type: str | None, *, extension: str | None = None
    ) -> CachedFile:
        """Write `data` under its sha256 name and return where; blocking (call off the loop).
        `extension` overrides the one of `media_type` (`.txt` for a text the proxy cut).

        Raises `OSError` when the directory cannot be made private or the write fails.
        """
        directory = self._ensure_directory()
        digest = hashlib.sha256(data).hexdigest()
        suffix = extension if extension is not None else extension_for(media_type)
        path = directory / f"{digest}{suffix}"
        if not self._still_written(path):
            _write_atomically(path, data)
            self._remember(path)
        return CachedFile(path, digest, len(data))

    def _still_written(self, path: Path) -> bool:
        """Whether `path` is still the file this cache wrote there."""
        with self._lock:
            identity = self._written.get(path)
        return identity is not None and _identity(path) == identity

    def _remember(self, path: Path) -> None:
        identity = _identity(path)
        if identity is None:
            return
        with self._lock:
            self._written[path] = identity
            self._written.move_to_end(path)
            while len(self._written) > WRITES_REMEMBERED:
                self._written.popitem(last=False)

    def find(self, sha256: str) -> Path | None:
        """The cached image whose content has this sha256, or None; reads nothing.

        The history helper names a removed image by its `MEDIA:` path this way: the digest is
        computed from the bytes in the conversation, never taken from a server's text."""
        if len(sha256) != 64 or any(char not in "0123456789abcdef" for char in sha256):
            return None
        for extension in dict.fromkeys(_EXTENSIONS.values()):
            path = self._directory / f"{sha256}{extension}"
            if path.is_file():
                return path
        return None

    def _ensure_directory(self) -> Path:
        directory = self._directory
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        info = directory.lstat()
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(f"the image cache `{directory}` is not a directory")
        if not owned_by_this_user(info):
            raise OSError(f"the image cache `{directory}` belongs to another user")
        if stat.S_IMODE(info.st_mode) != DIR_MODE:
            # An existing directory (or one made under a loose umask) is tightened, not trusted.
            os.chmod(directory, DIR_MODE)
        return directory


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """Device, inode, size and modification time of a private regular file of ours, else None."""
    try:
        info = path.lstat()
    except OSError:
        return None
    if (
        not stat.S_ISREG(info.st_mode)
        or stat.S_IMODE(info.st_mode) != FILE_MODE
        or not owned_by_this_user(info)
    ):
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary sibling (created 0600 by mkstemp), fsync, then rename over `path`.

    Rewriting an existing file of the same name is deliberate: it restores the content and the
    mode if someone changed them, and `os.replace` keeps readers from seeing a partial file.
    """
    descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            # Already renamed or never created; the original error is re-raised below.
            os.unlink(temporary)
        raise
