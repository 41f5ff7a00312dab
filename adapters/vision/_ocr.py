"""The embedded default backend: local OCR with rapidocr's bundled models, offline, no account.

It reads text, and only text: a screenshot becomes its size plus the visible text in
reading order with rough positions. A photo with no text is reported as such; this backend
never guesses at what a picture shows.
"""

from __future__ import annotations

import hashlib
import io
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from PIL import Image, UnidentifiedImageError

from ._base import Description, VisionUnavailable, clip_text, one_line
from ._changes import change_note
from ._layout import TextBox, TextLine, arrange_lines
from ._memory import Screen, ScreenMemory
from ._tuning import OcrSettings, detection_scale

if TYPE_CHECKING:
    from ._engine import Pixels, TextReader
    from ._incremental import Reading

BACKEND_NAME: Final = "local-ocr"
MAX_LINES: Final = 300
MAX_PIXELS: Final = 40_000_000
"""Larger images are refused before decoding: about 120 MB of RGB, far above any screen."""
MAX_CHARS: Final = 8_000
KEPT_READINGS: Final = 16
"""Screenshots whose text boxes a backend keeps, by content hash and detection set-up: the
same bytes asked again (by another router or stream, or with a question) are not read again,
unless `incremental: false` asks for every screenshot read in full. Boxes only, never pixels:
a few kilobytes each."""
INSTALL_HINT: Final = (
    "local ocr is not installed; run `pip install 'visiongate[ocr]'` "
    "or set `auxiliary.vision` to an openai-compatible endpoint"
)
NO_TEXT: Final = (
    "no text was found in this image (it may be a photo or a drawing); "
    "the local OCR backend cannot describe non-text content"
)

ReaderFactory = Callable[[OcrSettings], "TextReader"]
"""Builds the OCR models once, on first use; the default loads RapidOCR's."""


class LocalOCRBackend:
    """Describes images by the text RapidOCR reads in them.

    The models load lazily on first use, once per instance. `describe` is safe to call
    from several threads: one lock guards loading and running the models, which keep
    per-call state on themselves (and two reads at once would only fight over the cores).
    `describe_screen` reads a screenshot incrementally against the previous ones of its
    source, kept in a `ScreenMemory`.
    """

    def __init__(
        self,
        settings: OcrSettings | None = None,
        *,
        reader_factory: ReaderFactory | None = None,
    ) -> None:
        self.settings = settings or OcrSettings()
        self._reader_factory = reader_factory or _rapid_reader
        self._reader: TextReader | None = None
        self._lock = threading.Lock()
        self._readings: OrderedDict[tuple[str, tuple[float, ...]], tuple[TextBox, ...]] = (
            OrderedDict()
        )

    @property
    def name(self) -> str:
        return BACKEND_NAME

    def describe(
        self, image: bytes, media_type: str, *, question: str | None = None
    ) -> Description:
        """Size and visible text of `image`; with a `question`, says OCR cannot answer it."""
        started = time.perf_counter()
        width, height, pixels = _decode(image)
        digest = hashlib.sha256(image).hexdigest()
        reading = self._read(pixels, digest, recent=())
        lines = arrange_lines(reading.boxes, width, height)
        text = describe_lines(lines, width, height)
        if question:
            text = f"{_question_note(question)}\n{text}"
        return _description(text, lines, started, reading.mode)

    def describe_screen(
        self, image: bytes, media_type: str, *, memory: ScreenMemory, stream: str
    ) -> Description:
        """`describe` for one screenshot of a stream (a source such as `computer_use`).

        Reads only what changed since the screenshots of `stream` kept in `memory`, says
        which lines changed since the previous one, and remembers this one in their place.
        """
        started = time.perf_counter()
        digest = hashlib.sha256(image).hexdigest()
        recent = memory.recent(stream)
        usable = recent if self.settings.incremental else ()
        screen = self._twin(usable, digest)
        mode, scroll = "repeat", None
        if screen is None:
            screen, mode, scroll = self._screen(image, digest, usable)
        width, height = screen.size
        previous = recent[0] if recent and recent[0].size == (width, height) else None
        before = [line.text for line in previous.lines] if previous is not None else None
        note = change_note(before, [line.text for line in screen.lines], scroll)
        memory.remember(stream, screen, keep=self.settings.history)
        text = describe_lines(screen.lines, width, height, note=note)
        return _description(text, screen.lines, started, mode)

    def _twin(self, recent: Sequence[Screen], digest: str) -> Screen | None:
        """A remembered screenshot with the very same bytes, read with these settings."""
        for screen in recent:
            if screen.digest == digest and screen.setup == self._setup(*screen.size):
                return screen
        return None

    def _screen(
        self, image: bytes, digest: str, recent: Sequence[Screen]
    ) -> tuple[Screen, str, int | None]:
        width, height, pixels = _decode(image)
        reading = self._read(pixels, digest, recent)
        lines = tuple(arrange_lines(reading.boxes, width, height))
        pixels.setflags(write=False)
        screen = Screen(pixels, digest, reading.boxes, lines, self._setup(width, height))
        return screen, reading.mode, reading.scroll

    def _setup(self, width: int, height: int) -> tuple[float, ...]:
        """What the boxes depend on besides the pixels: the detection scale and its limit."""
        scale = detection_scale(width, height, self.settings)
        return (scale, float(self.settings.det_max_side))

    def _read(self, pixels: Pixels, digest: str, recent: Sequence[Screen]) -> Reading:
        # The models are third-party native code that can fail in many ways; the backend
        # contract turns every failure into a reason, with the cause chained for debugging.
        read_screen = _read_screen()
        height, width = pixels.shape[:2]
        setup = self._setup(width, height)
        key = (digest, setup)
        with self._lock:
            kept = self._readings.get(key) if self.settings.incremental else None
            if kept is not None:
                from ._incremental import Reading  # loaded by `_read_screen`

                self._readings.move_to_end(key)
                return Reading(kept, "repeat", share=0.0)
            reader = self._loaded_reader()
            try:
                reading = read_screen(
                    reader, pixels, setup[0], setup=setup, digest=digest, recent=recent
                )
            except VisionUnavailable:
                raise
            except Exception as exc:
                raise VisionUnavailable(f"local ocr failed: {one_line(str(exc))}") from exc
            self._readings[key] = reading.boxes
            while len(self._readings) > KEPT_READINGS:
                self._readings.popitem(last=False)
            return reading

    def _loaded_reader(self) -> TextReader:
        if self._reader is None:
            try:
                self._reader = self._reader_factory(self.settings)
            except VisionUnavailable:
                raise
            except Exception as exc:
                reason = f"local ocr could not start: {one_line(str(exc))}"
                raise VisionUnavailable(reason) from exc
        return self._reader


def _description(text: str, lines: Sequence[TextLine], started: float, mode: str) -> Description:
    return Description(
        text=text,
        backend=BACKEND_NAME,
        cached=mode == "repeat",
        elapsed_ms=(time.perf_counter() - started) * 1000,
        found_text=bool(lines),
        lines=len(lines),
        reading=mode,
    )


def describe_lines(
    lines: Sequence[TextLine], width: int, height: int, *, note: str | None = None
) -> str:
    """The model-facing text for OCR lines, or the plain no-text statement.

    Lines are numbered from 1, so `note` (what changed since the previous screenshot) can
    name them.
    """
    if not lines:
        text = f"{width}x{height} image: {NO_TEXT}"
        return f"{text}\n{note}" if note else text
    shown = lines[:MAX_LINES]
    header = (
        f"{width}x{height} image, text read by local OCR: {len(lines)} "
        f"line{'s' if len(lines) != 1 else ''} in reading order, region by region, numbered "
        "(positions are rough, on a 3x3 grid of the image)"
    )
    body = [f"{number} [{line.position}] {line.text}" for number, line in enumerate(shown, 1)]
    if len(lines) > len(shown):
        body.append(f"({len(lines) - len(shown)} more lines not shown)")
    return clip_text("\n".join([header, *([note] if note else []), *body]), MAX_CHARS)


def _question_note(question: str) -> str:
    return (
        f"local OCR cannot answer questions about images (asked: `{one_line(question, 160)}`); "
        "it can only report the text it read:"
    )


def _decode(image: bytes) -> tuple[int, int, Any]:
    """Width, height and an RGB uint8 array of `image`."""
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
    return rgb.width, rgb.height, np.asarray(rgb, dtype=np.uint8)


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
    return image if image.mode == "RGB" else image.convert("RGB")


def _import_numpy() -> Any:
    try:
        import numpy
    except ImportError as exc:
        raise VisionUnavailable(INSTALL_HINT) from exc
    return numpy


def _read_screen() -> Callable[..., Reading]:
    """The incremental reader; it needs numpy and OpenCV, which come with the OCR extra."""
    try:
        from ._incremental import read_screen
    except ImportError as exc:
        raise VisionUnavailable(INSTALL_HINT) from exc
    return read_screen


def _rapid_reader(settings: OcrSettings) -> TextReader:
    try:
        import onnxruntime  # noqa: F401  (rapidocr does not require its inference engine)
        import rapidocr  # noqa: F401  (the models ship in this package)
    except ImportError as exc:
        raise VisionUnavailable(INSTALL_HINT) from exc
    from ._engine import RapidReader

    try:
        return RapidReader(settings)
    except FileNotFoundError as exc:
        raise VisionUnavailable(f"local ocr cannot start: {exc}") from exc
