"""Rotation of a JSONL trace: when a file is due, what the closed file is called, and what
happens to it afterwards (gzip, retention).

Closed files are named after the moment they were closed, `decisions.20261130T094100123456Z.jsonl`
(`.jsonl.gz` once compressed), so they sort in time order and stay readable by any tool that
reads the live file, and `visiongate audit` reads a whole directory of them.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import msgspec

logger = logging.getLogger("visiongate")

PERIOD_SECONDS: Final = {"S": 1, "M": 60, "H": 3600, "D": 86400, "midnight": 86400}
"""Units of `when`, as in `logging.handlers.TimedRotatingFileHandler` (in UTC)."""

_FIRST_LINE_LIMIT: Final = 1 << 20


@dataclass(frozen=True)
class Rotation:
    """When the live file is closed and what happens to closed files.

    `max_bytes`: close the file before a record would take it past this size (a record is
    never split; one larger than the limit gets a file of its own). `when` and `interval`:
    close it at every `interval` x `when` boundary of UTC time (`when` one of S, M, H, D,
    midnight). `compress`: gzip closed files. `backups`: how many closed files to keep (None
    keeps them all)."""

    max_bytes: int | None = None
    when: str | None = None
    interval: int = 1
    compress: bool = False
    backups: int | None = None

    def __post_init__(self) -> None:
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise ValueError(f"`max_bytes` must be positive, not `{self.max_bytes}`")
        if self.when is not None and self.when not in PERIOD_SECONDS:
            raise ValueError(f"`when` must be one of {', '.join(PERIOD_SECONDS)}: `{self.when}`")
        if self.interval < 1:
            raise ValueError(f"`interval` must be at least 1, not `{self.interval}`")
        if self.backups is not None and self.backups < 0:
            raise ValueError(f"`backups` must be 0 or more, not `{self.backups}`")

    @property
    def active(self) -> bool:
        return self.max_bytes is not None or self.when is not None

    def period(self, seconds: float) -> int:
        """The number of the time period `seconds` falls in (0 when rotation is not by time)."""
        if self.when is None:
            return 0
        return int(seconds // (PERIOD_SECONDS[self.when] * self.interval))


def closed_name(path: Path, now: float) -> Path:
    """A fresh name for the file being closed: the live name with the UTC moment inserted."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}Z"
    stem, suffix = _split(path)
    candidate = path.with_name(f"{stem}.{stamp}{suffix}")
    number = 0
    while candidate.exists() or candidate.with_name(candidate.name + ".gz").exists():
        number += 1
        candidate = path.with_name(f"{stem}.{stamp}-{number}{suffix}")
    return candidate


def _split(path: Path) -> tuple[str, str]:
    """(`decisions`, `.jsonl`) for `decisions.jsonl`; a name without a suffix keeps none."""
    return (path.stem, path.suffix) if path.suffix else (path.name, "")


def closed_files(path: Path) -> list[Path]:
    """Closed files of the live file `path`, oldest first."""
    stem, suffix = _split(path)
    pattern = re.compile(
        re.escape(stem) + r"\.\d{8}T\d{12}Z(-\d+)?" + re.escape(suffix) + r"(\.gz)?"
    )
    found = [item for item in path.parent.iterdir() if pattern.fullmatch(item.name)]
    return sorted(found, key=lambda item: item.name)


def first_record_period(path: Path, rotation: Rotation) -> int | None:
    """The period of the first record in `path`; None when the file is empty or unreadable."""
    try:
        with path.open("rb") as stream:
            line = stream.readline(_FIRST_LINE_LIMIT)
    except OSError:
        return None
    if not line.strip():
        return None
    try:
        stamp = str(msgspec.json.decode(line, type=dict)["timestamp"])
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (msgspec.DecodeError, RecursionError, KeyError, TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return rotation.period(moment.timestamp())


def finish(closed: Path, live: Path, rotation: Rotation) -> None:
    """After a file is closed (no writer will touch it again): gzip it, then apply `backups`."""
    try:
        if rotation.compress:
            compress(closed)
        if rotation.backups is not None:
            for old in closed_files(live)[: -rotation.backups or None]:
                old.unlink(missing_ok=True)
    except OSError as error:
        # The records are safe in the uncompressed file; only tidying failed.
        logger.warning("visiongate: could not compress or prune `%s`: %s", closed, error)


def compress(path: Path) -> Path:
    """`path` -> `path.gz`, atomically (a crash leaves the original, never half a gzip)."""
    target = path.with_name(path.name + ".gz")
    partial = path.with_name(path.name + ".gz.partial")
    with path.open("rb") as source, gzip.open(partial, "wb", compresslevel=6) as sink:
        shutil.copyfileobj(source, sink, 1 << 20)
    os.replace(partial, target)
    path.unlink()
    return target
