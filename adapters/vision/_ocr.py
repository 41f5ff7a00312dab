"""The embedded default backend: local OCR with rapidocr-onnxruntime, offline, no account.

It reads text, and only text: a screenshot becomes its size plus the visible text in
reading order with rough positions. A photo with no text is reported as such; this backend
never guesses at what a picture shows.
"""

from __future__ import annotations

import io
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

from PIL import Image, UnidentifiedImageError

from ._base import Description, VisionUnavailable, clip_text, one_line
from ._layout import TextLine, arrange_lines, boxes_from_ocr

BACKEND_NAME: Final = "local-ocr"
MAX_LINES: Final = 300
MAX_PIXELS: Final = 40_000_000
"""Larger images are refused before decoding: about 120 MB of RGB, far above any screen."""
MAX_CHARS: Final = 8_000
INSTALL_HINT: Final = (
    "local ocr is not installed; run `pip install 'visiongate[ocr]'` "
    "or set `auxiliary.vision` to an openai-compatible endpoint"
)
NO_TEXT: Final = (
    "no text was found in this image (it may be a photo or a drawing); "
    "the local OCR backend cannot describe non-text content"
)

OcrEngine = Callable[[Any], tuple[Any, Any]]
"""RapidOCR's call shape: `engine(bgr_array) -> (result or None, timings)`."""


class LocalOCRBackend:
    """Describes images by the text RapidOCR reads in them.

    The engine loads lazily on first use, once per instance. `describe` is safe to call
    from several threads: one lock guards loading and running the engine, because the
    engine keeps per-call settings on itself and already uses every core for one image.
    """

    def __init__(self, engine_factory: Callable[[], OcrEngine] | None = None) -> None:
        self._engine_factory = engine_factory or _rapidocr_engine
        self._engine: OcrEngine | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return BACKEND_NAME

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        """Size and visible text of `image`; with a `question`, says OCR cannot answer it."""
        started = time.perf_counter()
        width, height, bgr = _decode(image)
        lines = arrange_lines(boxes_from_ocr(self._read(bgr)), width, height)
        text = describe_lines(lines, width, height)
        if question:
            text = f"{_question_note(question)}\n{text}"
        return Description(
            text=text,
            backend=BACKEND_NAME,
            cached=False,
            elapsed_ms=(time.perf_counter() - started) * 1000,
            found_text=bool(lines),
            lines=len(lines),
        )

    def _read(self, bgr: Any) -> Any:
        # The engine is third-party native code that can fail in many ways; the backend
        # contract turns every failure into a reason, with the cause chained for debugging.
        with self._lock:
            if self._engine is None:
                self._engine = self._start_engine()
            try:
                result, _timings = self._engine(bgr)
            except Exception as exc:
                raise VisionUnavailable(f"local ocr failed: {one_line(str(exc))}") from exc
        return result

    def _start_engine(self) -> OcrEngine:
        try:
            return self._engine_factory()
        except VisionUnavailable:
            raise
        except Exception as exc:
            raise VisionUnavailable(f"local ocr could not start: {one_line(str(exc))}") from exc


def describe_lines(lines: Sequence[TextLine], width: int, height: int) -> str:
    """The model-facing text for OCR lines, or the plain no-text statement."""
    if not lines:
        return f"{width}x{height} image: {NO_TEXT}"
    shown = lines[:MAX_LINES]
    header = (
        f"{width}x{height} image, text read by local OCR: {len(lines)} "
        f"line{'s' if len(lines) != 1 else ''} in reading order, region by region "
        "(positions are rough, on a 3x3 grid of the image)"
    )
    body = [f"[{line.position}] {line.text}" for line in shown]
    if len(lines) > len(shown):
        body.append(f"({len(lines) - len(shown)} more lines not shown)")
    return clip_text("\n".join([header, *body]), MAX_CHARS)


def _question_note(question: str) -> str:
    return (
        f"local OCR cannot answer questions about images (asked: `{one_line(question, 160)}`); "
        "it can only report the text it read:"
    )


def _decode(image: bytes) -> tuple[int, int, Any]:
    """Width, height and a BGR uint8 array (RapidOCR's channel order) of `image`."""
    np = _import_numpy()
    try:
        with warnings.catch_warnings():
            # Pillow warns before it refuses; a refusal is reported below as a reason.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(image)) as opened:
                _check_size(opened.width, opened.height)
                rgb = _flatten_to_rgb(opened)
    except UnidentifiedImageError as exc:
        raise VisionUnavailable(
            "the image could not be decoded: its format was not recognised; check that the "
            "tool returned an image"
        ) from exc
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise VisionUnavailable(f"the image could not be decoded ({one_line(str(exc))})") from exc
    bgr = np.ascontiguousarray(np.asarray(rgb)[:, :, ::-1])
    return rgb.width, rgb.height, bgr


def _check_size(width: int, height: int) -> None:
    if width * height > MAX_PIXELS:
        raise VisionUnavailable(
            f"the image is too large for local ocr ({width}x{height}, over {MAX_PIXELS:,} pixels)"
        )


def _flatten_to_rgb(image: Image.Image) -> Image.Image:
    # Screenshots often carry alpha; dark text on a transparent background must land on
    # white, or it would vanish into the black that a plain `convert("RGB")` gives.
    image.load()
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        canvas = Image.new("RGB", rgba.size, "white")
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    return image.convert("RGB")


def _import_numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise VisionUnavailable(INSTALL_HINT) from exc
    return numpy


def _rapidocr_engine() -> OcrEngine:
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:
        raise VisionUnavailable(INSTALL_HINT) from exc
    # No angle classifier: screenshots are never upside down, and on small UI text the
    # classifier flips crops by mistake (it read a menu's `Edit` as `IP3`). It also saves time.
    engine: OcrEngine = RapidOCR(use_cls=False)
    return engine
