"""The auxiliary vision backend's settings (`auxiliary.vision` of the agent config) and their
checks: what `lint --config` reports and what the adapters build the backend from (`_vision`;
the local OCR's tuning in `_ocr`). Only the standard library and the kernel are imported."""

from ._ocr import OcrSettings, default_threads, usable_cores
from ._problems import vision_setting_problem, vision_setting_problems
from ._vision import (
    ALIASES,
    DEFAULT_MAX_EDGE_PX,
    DEFAULT_MAX_IMAGE_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT_S,
    KNOWN_PROVIDERS,
    MAX_DEADLINE_S,
    MAX_TIMEOUT_S,
    PATH,
    VisionSettingError,
    VisionSettings,
    default_deadline,
    parse_vision_settings,
)

__all__ = [
    "ALIASES",
    "DEFAULT_MAX_EDGE_PX",
    "DEFAULT_MAX_IMAGE_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "KNOWN_PROVIDERS",
    "MAX_DEADLINE_S",
    "MAX_TIMEOUT_S",
    "PATH",
    "OcrSettings",
    "VisionSettingError",
    "VisionSettings",
    "default_deadline",
    "default_threads",
    "parse_vision_settings",
    "usable_cores",
    "vision_setting_problem",
    "vision_setting_problems",
]
