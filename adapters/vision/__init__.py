"""Auxiliary vision for the text lane: describe an image as text, never pass its pixels.

`backend_from_config` builds the backend that `auxiliary.vision` names (local OCR by
default), wrapped in a content-hash cache. `describe_or_unavailable` turns one image into
the note to prepend to a tool result; it never raises on a backend failure, and a failed
note still keeps the image's `MEDIA:` path but none of its pixels.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
import warnings
from dataclasses import dataclass
from typing import Final

from PIL import Image

from ._base import (
    Description,
    VisionBackend,
    VisionConfigError,
    VisionUnavailable,
    one_line,
    redact_data_urls,
)
from ._cache import CachedVisionBackend
from ._config import VisionSettings, backend_from_config, parse_vision_settings
from ._http import OpenAICompatibleBackend
from ._memory import ScreenBackend, ScreenMemory
from ._ocr import LocalOCRBackend
from ._tuning import OcrSettings

__all__ = [
    "CachedVisionBackend",
    "Description",
    "DescriptionNote",
    "LocalOCRBackend",
    "OcrSettings",
    "OpenAICompatibleBackend",
    "ScreenMemory",
    "VisionBackend",
    "VisionConfigError",
    "VisionSettings",
    "VisionUnavailable",
    "backend_from_config",
    "describe_or_unavailable",
    "describe_or_unavailable_async",
    "parse_vision_settings",
]

_LOG: Final = logging.getLogger(__name__)
_HTTP_PREFIX: Final = "openai-compatible:"
_MEDIA_TAG: Final = re.compile(r"MEDIA:", re.IGNORECASE)


@dataclass(frozen=True)
class DescriptionNote:
    """The text to prepend to a tool result, and what the decision record needs."""

    text: str
    """What the model reads, in place of the image."""
    ok: bool
    """True when a backend described the image."""
    reason: str | None
    """Why vision was unavailable; None when `ok`."""
    description: Description | None
    """The backend's description; None when not `ok`."""
    backend: str
    """The backend's name, whether or not it succeeded."""
    media_path: str | None = None
    """The image's path, as given, for the `MEDIA:` reference."""


def describe_or_unavailable(
    backend: VisionBackend,
    image: bytes,
    media_type: str,
    *,
    media_path: str | None,
    question: str | None = None,
    memory: ScreenMemory | None = None,
    stream: str | None = None,
    image_tool: str | None = "vision_analyze",
) -> DescriptionNote:
    """Describe `image` for the model; on any backend failure, say why instead.

    With a `memory` and a `stream` (the source, such as `computer_use`), a backend that
    reads screenshot streams reads only what changed since the previous screenshot of that
    stream and says so. Never raises because a backend failed: the note then says vision
    was unavailable, keeps the `MEDIA:` path, and holds no image data. `image_tool`: the
    tool the model can call for a closer look (None: the note offers none).
    """
    name = backend.name
    try:
        description = _describe(backend, image, media_type, question, memory, stream)
    except VisionUnavailable as exc:
        return _unavailable(name, exc.reason, media_path)
    except Exception as exc:
        # A backend outside this package broke its contract; fail closed, but log the
        # traceback so the bug is not lost behind a one-line reason.
        _LOG.exception("vision backend %s raised instead of VisionUnavailable", name)
        reason = f"the vision backend `{name}` failed unexpectedly: {one_line(str(exc))}"
        return _unavailable(name, reason, media_path)
    header = _header(image, media_type, description.backend)
    lines = [header, _defused(description.text)]
    if media_path and image_tool:
        lines.append(f"[for a closer look, call {image_tool} with MEDIA:{media_path}]")
    return DescriptionNote("\n".join(lines), True, None, description, name, media_path)


async def describe_or_unavailable_async(
    backend: VisionBackend,
    image: bytes,
    media_type: str,
    *,
    media_path: str | None,
    question: str | None = None,
    memory: ScreenMemory | None = None,
    stream: str | None = None,
    image_tool: str | None = "vision_analyze",
) -> DescriptionNote:
    """`describe_or_unavailable` in a worker thread, for callers on an event loop.

    OCR is CPU-bound and the HTTP backend is synchronous, so both would block the loop.
    """
    return await asyncio.to_thread(
        describe_or_unavailable,
        backend,
        image,
        media_type,
        media_path=media_path,
        question=question,
        memory=memory,
        stream=stream,
        image_tool=image_tool,
    )


def _describe(
    backend: VisionBackend,
    image: bytes,
    media_type: str,
    question: str | None,
    memory: ScreenMemory | None,
    stream: str | None,
) -> Description:
    if memory is not None and stream and question is None and isinstance(backend, ScreenBackend):
        return backend.describe_screen(image, media_type, memory=memory, stream=stream)
    return backend.describe(image, media_type, question=question)


def _defused(text: str) -> str:
    """Third-party text made inert: no image data, and no `MEDIA:` tag of its own.

    A screenshot (or a vision model) can show `MEDIA:/home/me/.ssh/id_rsa`; agents that
    deliver `MEDIA:` files to the user must only ever see the tag this module writes.
    """
    return _MEDIA_TAG.sub("MEDIA(quoted):", redact_data_urls(text))


def _unavailable(name: str, reason: str, media_path: str | None) -> DescriptionNote:
    reason = _defused(one_line(reason, 400))
    where = f" MEDIA:{media_path}" if media_path else ""
    text = f"[vision unavailable: {reason}; the image was not shown to the model.{where}]"
    return DescriptionNote(text, False, reason, None, name, media_path)


def _header(image: bytes, media_type: str, backend: str) -> str:
    size = _image_size(image)
    kind = _format_label(media_type)
    what = f"{size[0]}x{size[1]} {kind}" if size else kind
    return (
        f"[image attached by the tool: {what}; its pixels are kept out of this "
        f"conversation, so {_backend_label(backend)} describes it below]"
    )


def _backend_label(backend: str) -> str:
    if backend == "local-ocr":
        return "local OCR"
    if backend.startswith(_HTTP_PREFIX):
        return f"the vision model `{backend.removeprefix(_HTTP_PREFIX)}`"
    return f"`{backend}`"


def _format_label(media_type: str) -> str:
    subtype = media_type.partition("/")[2].partition(";")[0].partition("+")[0]
    return f"{subtype.upper()} image" if subtype else "image"


def _image_size(image: bytes) -> tuple[int, int] | None:
    """Width and height from the image header, without decoding pixels; None if unreadable."""
    try:
        with warnings.catch_warnings():
            # Only the header is read here; size limits are the backends' business.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(image)) as opened:
                return opened.size
    except (OSError, ValueError, Image.DecompressionBombError):
        # The size is decoration: the backend has already described the image.
        return None
