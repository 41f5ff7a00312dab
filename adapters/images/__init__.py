"""The image-processing stage of the native lane (issue 4).

Turns whatever a tool produced into images the provider accepts, within the base64 budget and
the long-edge ceiling, at most N per result, off the event loop, never attaching anything
broken. The names here are the stage's whole public surface.
"""

from __future__ import annotations

from ._batch import ImageWorker, default_worker, process_images, process_images_async
from ._container.base64_text import decode_base64
from ._memo import FitCache
from ._process import process_image, scale_note
from ._sniff import sniff_media_type
from ._types import (
    OUTPUT_MEDIA_TYPES,
    BatchResult,
    ImageTarget,
    ProcessedImage,
    RefusedImage,
    Region,
    SkippedImage,
    Uncovered,
)

__all__ = [
    "OUTPUT_MEDIA_TYPES",
    "BatchResult",
    "FitCache",
    "ImageTarget",
    "ImageWorker",
    "ProcessedImage",
    "RefusedImage",
    "Region",
    "SkippedImage",
    "Uncovered",
    "decode_base64",
    "default_worker",
    "process_image",
    "process_images",
    "process_images_async",
    "scale_note",
    "sniff_media_type",
]
