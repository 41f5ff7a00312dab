"""Values and the protocol shared by the auxiliary vision backends.

A backend turns image bytes into a text description, or raises `VisionUnavailable`.
It never returns pixels: whatever it hands back is text meant for the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from visiongate.kernel._display import one_line as squeeze
from visiongate.kernel._errors import VisiongateError

_DATA_URL: Final = re.compile(r"data:[\w.+-]*/[\w.+-]*;base64,[A-Za-z0-9+/=_-]*")
_BASE64_RUN: Final = re.compile(r"[A-Za-z0-9+/=_-]{64,}")
_IMAGE_DATA: Final = ((_DATA_URL, "data:(redacted)"), (_BASE64_RUN, "(redacted)"))


class VisionUnavailable(VisiongateError):
    """A backend could not describe an image.

    `reason` is one lower-case line saying what failed and what to fix; it never holds
    image data, so it is safe to show to the model and to store in a decision record.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class VisionConfigError(VisionUnavailable):
    """`auxiliary.vision` in the agent config cannot be turned into a backend.

    A subclass of `VisionUnavailable`, so a caller that fails closed on one handles both.
    `code` is stable (snake_case), `path` is the offending key (`auxiliary.vision.model`)
    and `help` suggests a fix when there is one.
    """

    def __init__(self, reason: str, *, code: str, path: str, help_text: str = "") -> None:
        super().__init__(reason)
        self.code = code
        self.path = path
        self.help = help_text


@dataclass(frozen=True)
class Description:
    """What a backend saw in one image, as text for the model."""

    text: str
    """What the model reads."""
    backend: str
    """Which backend wrote it: `local-ocr`, `openai-compatible:<provider>/<model>`."""
    cached: bool
    """True when the text came from the description cache rather than the backend."""
    elapsed_ms: float
    """Time this call took, cache look-up included."""
    found_text: bool | None = None
    """OCR only: whether any text was read; None for backends that do not know."""
    lines: int | None = None
    """OCR only: how many lines of text were read."""
    reading: str | None = None
    """OCR only: `full`, `incremental` (only what changed since the previous screenshot of
    the source was read) or `repeat` (a remembered screenshot, nothing read)."""


@runtime_checkable
class VisionBackend(Protocol):
    """Describes images as text; raises `VisionUnavailable` on any failure."""

    @property
    def name(self) -> str:
        """A short stable label, such as `local-ocr`."""
        ...

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        """Describe `image` (or answer `question` about it) as text, never as pixels."""
        ...


def redact_data_urls(text: str) -> str:
    """`text` with every base64 data URL replaced, so no image travels inside text."""
    return _DATA_URL.sub("data:(redacted)", text)


def one_line(text: str, limit: int = 200) -> str:
    """`text` squeezed into one short line with any image data redacted.

    Error bodies from servers sometimes echo the request, data URL included; this keeps
    such echoes (and thus pixels) out of reasons that reach the model.
    """
    return squeeze(text, limit, redact=_IMAGE_DATA)


def clip_text(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a line break when possible, marked when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    kept = text[: cut if cut > limit // 2 else limit].rstrip()
    return f"{kept}\n(description cut at {limit} characters)"
