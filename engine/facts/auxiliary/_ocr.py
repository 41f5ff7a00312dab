"""How the local OCR backend runs: `auxiliary.vision.ocr` in the agent config, read and checked.

| key            | default          | what it sets                                          |
|----------------|------------------|-------------------------------------------------------|
| `threads`      | half the cores   | onnxruntime threads per model run                     |
| `det_max_side` | 2000             | detection runs on the image scaled to this longer side |
| `rec_batch`    | 1                | text crops per recognition run                        |
| `incremental`  | `true`           | re-read only what changed since the last screenshot   |
| `history`      | 2                | screenshots remembered per source                     |

Pure values and checks, no numpy: the agent config is read (by `lint --config` too) whether or
not OCR is installed. `VisionSettingError` is what every check of `auxiliary.vision` raises.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from visiongate.kernel._errors import VisiongateError

__all__ = ["OcrSettings", "VisionSettingError", "default_threads", "parse_ocr_settings"]

PATH: Final = "auxiliary.vision.ocr"
DET_MAX_SIDE_RANGE: Final = (640, 4096)
REC_BATCH_RANGE: Final = (1, 64)
THREADS_RANGE: Final = (1, 64)
HISTORY_RANGE: Final = (1, 8)


class VisionSettingError(VisiongateError, ValueError):
    """A value of `auxiliary.vision` that the backend cannot run with. `code` is stable
    (snake_case), `path` is the offending key (`auxiliary.vision.timeout`) and `help` suggests
    a fix when there is one; the adapters raise it as their `VisionConfigError`."""

    def __init__(self, reason: str, *, code: str, path: str, help_text: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.path = path
        self.help = help_text


def default_threads() -> int:
    """Half the cores this process may run on, at least one.

    Measured on a 2-core machine shared with other work (`bench_ocr.py --tune`): one
    thread read four screenshots in 25 s of wall time and 16 s of CPU, two threads in 40 s
    and 29 s; onnxruntime's threads spin waiting for each other whenever another process
    holds a core. An agent's machine also runs the agent and its browser.
    """
    return max(1, usable_cores() // 2)


def usable_cores() -> int:
    """Cores this process may run on (a container's limit, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        # `sched_getaffinity` exists on Linux only; elsewhere the plain count is the best guess.
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class OcrSettings:
    """Knobs of the local OCR backend; the defaults are the measured best on 2 cores."""

    threads: int = field(default_factory=default_threads)
    """onnxruntime intra-op threads (left to itself, onnxruntime takes every core)."""
    det_max_side: int = 2000
    """Detection scales the image down so its longer side is at most this (text is read from
    the full-resolution pixels either way). Lower misses small text: on the tuning set the
    CER was 14% at 1280 and 1.8% at 1600, 0.19% at 2000 and 0.13% at 2560 (17% more CPU)."""
    rec_batch: int = 1
    """Text crops per recognition run; crops are sorted by width and padded to the widest.

    One is fastest: batches of 6 (RapidOCR's default) took 45 s of CPU where single crops
    took 29 s, batches of 12 took 68 s (`bench_ocr.py --tune`, same four screenshots)."""
    incremental: bool = True
    """Screenshots of the same source are read incrementally: only changed regions."""
    history: int = 2
    """Screenshots remembered per source; an exact repeat of any of them costs no OCR."""


def parse_ocr_settings(section: Mapping[str, Any]) -> OcrSettings:
    """`auxiliary.vision.ocr` (given the `auxiliary.vision` mapping) as settings."""
    value = section.get("ocr")
    if value is None:
        return OcrSettings()
    if not isinstance(value, Mapping):
        raise _error(f"`{PATH}` must be a mapping", "vision_config_type")
    unknown = sorted(str(key) for key in value if key not in _KEYS)
    if unknown:
        raise _error(
            f"`{PATH}` has an unknown key `{unknown[0]}`",
            "vision_config_value",
            unknown[0],
            "known keys: " + ", ".join(f"`{key}`" for key in _KEYS),
        )
    defaults = OcrSettings()
    return OcrSettings(
        threads=_whole(value, "threads", defaults.threads, THREADS_RANGE),
        det_max_side=_whole(value, "det_max_side", defaults.det_max_side, DET_MAX_SIDE_RANGE),
        rec_batch=_whole(value, "rec_batch", defaults.rec_batch, REC_BATCH_RANGE),
        incremental=_flag(value, "incremental", defaults.incremental),
        history=_whole(value, "history", defaults.history, HISTORY_RANGE),
    )


_KEYS: Final = ("threads", "det_max_side", "rec_batch", "incremental", "history")


def _error(reason: str, code: str, key: str = "", help_text: str = "") -> VisionSettingError:
    path = f"{PATH}.{key}" if key else PATH
    return VisionSettingError(reason, code=code, path=path, help_text=help_text)


def _whole(section: Mapping[str, Any], key: str, default: int, limits: tuple[int, int]) -> int:
    value = section.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(f"`{PATH}.{key}` must be a whole number", "vision_config_type", key)
    low, high = limits
    if not low <= value <= high:
        raise _error(f"`{PATH}.{key}` must be between {low} and {high}", "vision_config_value", key)
    return value


def _flag(section: Mapping[str, Any], key: str, default: bool) -> bool:
    value = section.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise _error(f"`{PATH}.{key}` must be true or false", "vision_config_type", key)
    return value
