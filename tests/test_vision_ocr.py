"""Local OCR on real images drawn with Pillow and on a real photo."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from visiongate.adapters.vision import (
    LocalOCRBackend,
    OcrSettings,
    VisionUnavailable,
    _engine,
    describe_or_unavailable,
)
from visiongate.adapters.vision._engine import (
    MODELS,
    RapidReader,
    Rect,
    bundled_models,
    read_regions,
)

FONT_PATHS = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"),
)


def font(size: int = 28) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for path in FONT_PATHS:
        if path.exists():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)


def encode(image: Image.Image, fmt: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def dialog(mode: str = "RGB", background: str | tuple[int, ...] = "white") -> bytes:
    """A small dialog: a title row with two ends, a centred question, a corner button."""
    image = Image.new(mode, (800, 300), background)
    draw = ImageDraw.Draw(image)
    draw.text((20, 20), "Settings", font=font(), fill="black")
    draw.text((600, 20), "Sign out", font=font(), fill="black")
    draw.text((250, 135), "Save changes to invoice 42?", font=font(), fill="black")
    draw.text((640, 250), "Cancel", font=font(), fill="black")
    return encode(image)


@pytest.fixture(scope="module")
def ocr() -> LocalOCRBackend:
    return LocalOCRBackend()


def test_screenshot_text_in_reading_order_with_positions(ocr: LocalOCRBackend) -> None:
    description = ocr.describe(dialog(), "image/png")
    assert description.found_text is True
    assert description.lines == 4
    assert description.backend == "local-ocr"
    header, *lines = description.text.splitlines()
    assert header.startswith("800x300 image, text read by local OCR: 4 lines")
    assert lines == [
        "1 [top-left] Settings",
        "2 [top-right] Sign out",
        "3 [center] Save changes to invoice 42?",
        "4 [bottom-right] Cancel",
    ]


def test_transparent_screenshot_is_read_on_white(ocr: LocalOCRBackend) -> None:
    description = ocr.describe(dialog("RGBA", (0, 0, 0, 0)), "image/png")
    assert "3 [center] Save changes to invoice 42?" in description.text


def test_photo_says_no_text_and_invents_nothing(ocr: LocalOCRBackend) -> None:
    # Any OCR model reads a lone glyph into some photos: of skimage's 22, rapidocr 1.4.4 read
    # one in 3 (coffee `O`, horse `7`, clock `®`), 3.10 in 3 (astronaut's flag star as `X`,
    # coffee `8`, clock `O`). This photo has none for either: the test is the no-text report.
    skimage_data = pytest.importorskip("skimage.data")
    photo = encode(Image.fromarray(skimage_data.chelsea()), "JPEG")
    description = ocr.describe(photo, "image/jpeg")
    assert description.found_text is False
    assert description.lines == 0
    assert description.text == (
        "451x300 image: no text was found in this image (it may be a photo or a drawing); "
        "the local OCR backend cannot describe non-text content"
    )


def test_gradient_says_no_text(ocr: LocalOCRBackend) -> None:
    ramp = np.tile(np.linspace(0, 255, 640, dtype=np.uint8), (480, 1))
    description = ocr.describe(encode(Image.fromarray(ramp, "L")), "image/png")
    assert description.found_text is False
    assert "no text was found" in description.text


def test_question_is_answered_plainly_with_the_text(ocr: LocalOCRBackend) -> None:
    description = ocr.describe(dialog(), "image/png", question="what is the invoice total?")
    first, *rest = description.text.splitlines()
    assert first.startswith("local OCR cannot answer questions about images")
    assert "`what is the invoice total?`" in first
    assert "3 [center] Save changes to invoice 42?" in rest


def test_note_for_a_screenshot(ocr: LocalOCRBackend) -> None:
    note = describe_or_unavailable(ocr, dialog(), "image/png", media_path="/tmp/dialog.png")
    assert note.ok and note.reason is None
    header, *_, footer = note.text.splitlines()
    assert header == (
        "[image attached by the tool: 800x300 PNG image; its pixels are kept out of this "
        "conversation, so local OCR describes it below]"
    )
    assert footer == "[for a closer look, call vision_analyze with MEDIA:/tmp/dialog.png]"


def test_undecodable_bytes_are_unavailable_not_a_crash(ocr: LocalOCRBackend) -> None:
    with pytest.raises(VisionUnavailable, match="format was not recognised"):
        ocr.describe(b"definitely not an image", "image/png")


def test_oversized_image_is_refused_before_decoding(ocr: LocalOCRBackend) -> None:
    huge = encode(Image.new("1", (8_000, 6_000)))
    with pytest.raises(VisionUnavailable, match="too large for local ocr"):
        ocr.describe(huge, "image/png")


@pytest.mark.parametrize("module", ["rapidocr", "onnxruntime"])
def test_missing_rapidocr_says_how_to_install(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes the import itself fail, as when it is not installed
    # (rapidocr does not require onnxruntime, its inference engine: the extra does).
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(VisionUnavailable) as caught:
        LocalOCRBackend().describe(dialog(), "image/png")
    assert "pip install 'visiongate[ocr]'" in caught.value.reason


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_the_models_load_from_the_wheel_and_nothing_is_downloaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offline models are a requirement: rapidocr 3.x downloads a model that is not in its
    folder. visiongate passes the bundled files by path, so it never asks; were it to, this
    test's download stand-in fails it."""
    download = pytest.importorskip("rapidocr.utils.download_file")

    def no_network(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("rapidocr tried to download a model")

    monkeypatch.setattr(download.DownloadFile, "run", no_network)
    reader = RapidReader(OcrSettings())
    assert [path.name for path in bundled_models()] == list(MODELS)
    # The attributes of rapidocr used here, by name: a rapidocr that renames them fails here.
    assert callable(reader._detector.session) and callable(reader._detector.postprocess_op)
    image = np.asarray(Image.open(io.BytesIO(dialog())).convert("RGB"))
    boxes = read_regions(reader, image, [Rect(0, 0, image.shape[1], image.shape[0])], 1.0)
    assert "Save changes to invoice 42?" in [box.text for box in boxes[0]]


def test_a_rapidocr_without_the_models_is_unavailable_not_a_download(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_engine, "MODELS", ("PP-OCRv99_det.onnx", "PP-OCRv6_rec_small.onnx"))
    with pytest.raises(VisionUnavailable, match=r"ships no PP-OCRv99_det\.onnx") as caught:
        LocalOCRBackend().describe(dialog(), "image/png")
    assert "never downloads models" in caught.value.reason


class BrokenReader:
    """Models that fail the way onnxruntime does on input it cannot take."""

    def detect(self, image: object, scale: float) -> list[object]:
        raise RuntimeError("onnxruntime: bad input")

    def recognise(self, crops: object) -> list[tuple[str, float]]:
        raise AssertionError("recognition must not run after detection failed")


def test_engine_failure_becomes_a_reason() -> None:
    backend = LocalOCRBackend(reader_factory=lambda _settings: BrokenReader())  # type: ignore[arg-type,return-value]
    note = describe_or_unavailable(backend, dialog(), "image/png", media_path=None)
    assert not note.ok
    assert note.text == (
        "[vision unavailable: local ocr failed: onnxruntime: bad input; "
        "the image was not shown to the model.]"
    )


def test_small_ui_text_keeps_its_spaces(ocr: LocalOCRBackend) -> None:
    # On crops that hug the glyphs, the recogniser read 15 px text as `thetokencachesettings`;
    # a margin above and below each crop keeps the spaces.
    lines = [
        "the token cache settings produced text open lane branch",
        "window budget forecast the commit error revenue the routes",
        "server forecast budget agent produced lane revenue window",
    ]
    image = Image.new("RGB", (900, 130), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    small = ImageFont.truetype(str(FONT_PATHS[0]), 15) if FONT_PATHS[0].exists() else font(15)
    for row, text in enumerate(lines):
        draw.text((20, 16 + 34 * row), text, font=small, fill=(40, 40, 40))
    description = ocr.describe(encode(image), "image/png")
    assert [line.split("] ", 1)[1] for line in description.text.splitlines()[1:]] == lines
