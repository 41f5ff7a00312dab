"""The image cache: content-addressed, atomic, private."""

from __future__ import annotations

import hashlib
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from visiongate.adapters._cache import CACHE_DIR_ENV, ImageCache, default_cache_dir

PNG_BYTES = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_write_names_the_file_by_content_and_type(tmp_path: Path) -> None:
    cached = ImageCache(tmp_path / "images").write(PNG_BYTES, "image/png")
    digest = hashlib.sha256(PNG_BYTES).hexdigest()
    assert cached.path == tmp_path / "images" / f"{digest}.png"
    assert cached.sha256 == digest and cached.size == len(PNG_BYTES)
    assert cached.path.read_bytes() == PNG_BYTES


def test_files_are_0600_in_a_0700_directory(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        cached = ImageCache(tmp_path / "a" / "images").write(PNG_BYTES, "image/png")
    finally:
        os.umask(old)
    assert mode(cached.path) == 0o600
    assert mode(cached.path.parent) == 0o700


def test_an_existing_loose_directory_is_tightened(tmp_path: Path) -> None:
    directory = tmp_path / "images"
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)
    ImageCache(directory).write(PNG_BYTES, "image/jpeg")
    assert mode(directory) == 0o700


def test_rewriting_restores_content_and_mode(tmp_path: Path) -> None:
    cache = ImageCache(tmp_path)
    first = cache.write(PNG_BYTES, "image/png")
    os.chmod(first.path, 0o644)
    first.path.write_bytes(b"tampered")
    second = cache.write(PNG_BYTES, "image/png")
    assert second.path == first.path
    assert first.path.read_bytes() == PNG_BYTES and mode(first.path) == 0o600


def test_a_symlinked_cache_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "images").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="is not a directory"):
        ImageCache(tmp_path / "images").write(PNG_BYTES, "image/png")


def test_no_temporary_files_are_left_behind(tmp_path: Path) -> None:
    cache = ImageCache(tmp_path)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: cache.write(PNG_BYTES, "image/png"), range(32)))
    assert [path.name for path in tmp_path.iterdir()] == [
        hashlib.sha256(PNG_BYTES).hexdigest() + ".png"
    ]


def test_unknown_types_get_a_neutral_extension(tmp_path: Path) -> None:
    assert ImageCache(tmp_path).write(b"data", None).path.suffix == ".bin"


def test_default_directory_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "visiongate" / "images"


def test_the_same_screenshot_again_is_not_written_again(tmp_path: Path) -> None:
    # A server returning the same screenshot on every call cost a write and an fsync each time.
    cache = ImageCache(tmp_path)
    first = cache.write(PNG_BYTES, "image/png")
    before = first.path.stat()
    again = cache.write(PNG_BYTES, "image/png")
    after = again.path.stat()
    assert again == first
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("change", ["content", "mode", "removed"])
def test_a_file_changed_since_it_was_written_is_written_again(tmp_path: Path, change: str) -> None:
    cache = ImageCache(tmp_path)
    path = cache.write(PNG_BYTES, "image/png").path
    if change == "content":
        os.chmod(path, 0o600)
        path.write_bytes(b"tampered")
    elif change == "mode":
        os.chmod(path, 0o644)
    else:
        path.unlink()
    cache.write(PNG_BYTES, "image/png")
    assert path.read_bytes() == PNG_BYTES and mode(path) == 0o600
