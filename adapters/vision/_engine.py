"""Run the OCR models on whole images or on regions of them, at one fixed detection scale.

RapidOCR's own `__call__` picks the detection scale from the size of what it is given, so a
strip cut out of a screenshot would be read at another scale than the whole screenshot (a
60 px strip is blown up to 736 px). Incremental OCR needs a region read exactly as the
whole image would read it, so this module drives the two models itself: detection on each
region at the scale of the whole image, then one recognition pass over the crops of every
region, taken from the full-resolution pixels.

Imports numpy and OpenCV (declared by the `ocr` extra, with rapidocr and onnxruntime);
import it only once OCR is known to be installed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import cv2
import numpy as np
import numpy.typing as npt

from ._layout import TextBox
from ._tuning import OcrSettings

Pixels = npt.NDArray[np.uint8]
"""An image as a height x width x 3 array in RGB order; `RapidReader` hands the models BGR,
their channel order, one region or crop at a time."""
Quad = npt.NDArray[np.float32]
"""Four corners of a detected text box, clockwise from the top left, in image pixels."""

CROP_PAD: Final = 0.2
"""Each text crop is grown by this share of its height above and below before recognition.

The detector's boxes hug the glyphs; on such tight crops of small UI text the recogniser
drops most spaces (`thetokencachesettings`). With this margin the character error rate on
the bench corpus fell from 3.9% to 0.16% (0.15: 0.22%, 0.3: 0.73%), and the smaller text
in each 48 px high crop also makes recognition faster.
"""
TEXT_SCORE: Final = 0.5
"""Recognised text below this confidence is dropped (RapidOCR's default)."""
_STRIDE: Final = 32
"""The detection network needs sides that are multiples of this."""
MODELS: Final = ("PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx")
"""Detection and recognition models inside the rapidocr wheel (3.10 ships them, with the
recognition model's character list inside it). They are passed by path, so RapidOCR never
looks for a model to download: local OCR runs offline or not at all."""


@dataclass(frozen=True)
class Rect:
    """A pixel rectangle, `left`/`top` inclusive and `right`/`bottom` exclusive."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def area(self) -> int:
        return max(0, self.right - self.left) * max(0, self.bottom - self.top)

    def clipped(self, width: int, height: int) -> Rect:
        return Rect(
            max(0, self.left), max(0, self.top), min(width, self.right), min(height, self.bottom)
        )

    def grown(self, dx: int, dy: int) -> Rect:
        return Rect(self.left - dx, self.top - dy, self.right + dx, self.bottom + dy)

    def contains_point(self, x: float, y: float) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


class TextReader(Protocol):
    """The two OCR models: find text boxes, then read the text in each crop."""

    def detect(self, image: Pixels, scale: float) -> list[Quad]:
        """Text boxes in `image` (its own pixel coordinates), detected at `scale`."""
        ...

    def recognise(self, crops: Sequence[Pixels]) -> list[tuple[str, float]]:
        """The text in each crop and the model's confidence, in the same order."""
        ...


def read_regions(
    reader: TextReader,
    image: Pixels,
    regions: Sequence[Rect],
    scale: float,
    owners: Sequence[Sequence[Rect]] | None = None,
) -> list[list[TextBox]]:
    """The text boxes read in each region of `image`, in image coordinates.

    Detection runs once per region; recognition runs once over the crops of all regions,
    so the crops batch together. With `owners` (a list per region), only boxes whose centre
    lies in one of the region's owners are read: the rest of it is context for the detector.
    """
    found: list[tuple[int, Quad]] = []
    for index, region in enumerate(regions):
        patch = image[region.top : region.bottom, region.left : region.right]
        if patch.shape[0] < 2 or patch.shape[1] < 2:
            continue
        for quad in reader.detect(patch, scale):
            shifted = quad + np.array([region.left, region.top], dtype=np.float32)
            x, y = (float(value) for value in shifted.mean(axis=0))
            if owners is None or any(owner.contains_point(x, y) for owner in owners[index]):
                found.append((index, shifted))
    crops = [crop_quad(image, quad) for _, quad in found]
    texts = reader.recognise(crops) if crops else []
    boxes: list[list[TextBox]] = [[] for _ in regions]
    for (index, quad), (raw_text, score) in zip(found, texts, strict=True):
        box = _text_box(quad, raw_text, score)
        if box is not None:
            boxes[index].append(box)
    return boxes


def crop_quad(image: Pixels, quad: Quad) -> Pixels:
    """The text under `quad` with a margin above and below (`CROP_PAD`), straightened to an
    upright rectangle as RapidOCR crops it."""
    quad = _padded(quad, image.shape[1], image.shape[0])
    width = int(max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[2] - quad[3])))
    height = int(max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2])))
    width, height = max(width, 1), max(height, 1)
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    crop = np.asarray(
        cv2.warpPerspective(
            image, matrix, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC
        ),
        dtype=np.uint8,
    )
    if height / width >= 1.5:
        # A tall narrow crop is vertical text; the recogniser reads rows.
        crop = np.rot90(crop)
    return _bgr(crop)


def _padded(quad: Quad, width: int, height: int) -> Quad:
    """`quad` grown across its text direction by `CROP_PAD` of its height on each side."""
    down = (quad[3] + quad[2]) / 2 - (quad[0] + quad[1]) / 2
    grown = quad.astype(np.float32).copy()
    grown[:2] -= CROP_PAD * down
    grown[2:] += CROP_PAD * down
    grown[:, 0] = np.clip(grown[:, 0], 0, width - 1)
    grown[:, 1] = np.clip(grown[:, 1], 0, height - 1)
    return grown


def _text_box(quad: Quad, raw_text: str, score: float) -> TextBox | None:
    if score < TEXT_SCORE:
        return None
    # The bundled recognition model is trained on Chinese and English text and now and then
    # reads ASCII punctuation as its fullwidth form (`，` for `,`); NFKC folds it back.
    text = unicodedata.normalize("NFKC", raw_text).strip()
    if not text:
        return None
    xs, ys = quad[:, 0], quad[:, 1]
    return TextBox(float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()), text)


def bundled_models() -> tuple[Path, Path]:
    """The paths of `MODELS` in the installed rapidocr; `FileNotFoundError` naming what is
    missing when this rapidocr does not ship them."""
    import rapidocr

    folder = Path(rapidocr.__file__).parent / "models"
    paths = tuple(folder / name for name in MODELS)
    missing = [path.name for path in paths if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"rapidocr {getattr(rapidocr, '__version__', '?')} ships no {', '.join(missing)} "
            f"in {folder}; visiongate never downloads models (install rapidocr 3.10 or later)"
        )
    return paths[0], paths[1]


class RapidReader:
    """`TextReader` over the models inside the rapidocr wheel (`MODELS`).

    It uses RapidOCR's detector session and post-processing and its recogniser, not its
    `__call__`; the version range in pyproject.toml pins the attributes used here, and
    `tests/test_vision_ocr.py` checks them by name.
    """

    def __init__(self, settings: OcrSettings) -> None:
        from rapidocr import RapidOCR

        detection, recognition = bundled_models()
        # No angle classifier: screenshots are never upside down, and on small UI text the
        # classifier flips crops by mistake (it read a menu's `Edit` as `IP3`).
        engine: Any = RapidOCR(
            params={
                "Global.use_cls": False,
                "Global.log_level": "error",
                "Det.model_path": str(detection),
                "Rec.model_path": str(recognition),
                "Rec.rec_batch_num": settings.rec_batch,
                "EngineConfig.onnxruntime.intra_op_num_threads": settings.threads,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
        )
        self._detector: Any = engine._load_det_model()
        self._recogniser: Any = engine._load_rec_model()

    def detect(self, image: Pixels, scale: float) -> list[Quad]:
        height, width = image.shape[:2]
        target_w = max(_STRIDE, round(width * scale / _STRIDE) * _STRIDE)
        target_h = max(_STRIDE, round(height * scale / _STRIDE) * _STRIDE)
        resized = np.asarray(cv2.resize(_bgr(image), (target_w, target_h)), dtype=np.uint8)
        prediction = self._detector.session(_normalised(resized))
        # Ordered clockwise, clipped to the image, boxes under 4 px dropped.
        quads, _scores = self._detector.postprocess_op(prediction, (height, width))
        return [np.asarray(quad, dtype=np.float32) for quad in quads]

    def recognise(self, crops: Sequence[Pixels]) -> list[tuple[str, float]]:
        from rapidocr.ch_ppocr_rec import TextRecInput

        found = self._recogniser(TextRecInput(img=list(crops)))
        return [
            (str(text), float(score)) for text, score in zip(found.txts, found.scores, strict=True)
        ]


def _bgr(image: Pixels) -> Pixels:
    """RGB to the models' BGR, as a contiguous copy (OpenCV and onnxruntime want one)."""
    return np.ascontiguousarray(image[:, :, ::-1])


def _normalised(image: Pixels) -> npt.NDArray[np.float32]:
    """BGR uint8 to the detector's input: scaled to [-1, 1], channels first, batch of one."""
    scaled = image.astype(np.float32) * (2.0 / 255.0) - 1.0
    return np.ascontiguousarray(scaled.transpose(2, 0, 1)[np.newaxis])
