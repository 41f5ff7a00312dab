"""Regression: JPEG-or-WebP for photos is settled by WebP's top quality when JPEG beats it."""

from __future__ import annotations

import io

import skimage.data
from _image_samples import target
from PIL import Image

from visiongate.adapters.images import ProcessedImage, process_image
from visiongate.adapters.images._encode import WEBP, Codec
from visiongate.adapters.images._fitting import _at_size, _plan


class _FakeProbe:
    """Sizes and detail scores by codec, recording every quality asked of WebP."""

    exact = True

    def __init__(self, jpeg_detail: float, webp_detail: float) -> None:
        self.details = {"image/jpeg": jpeg_detail, "image/webp": webp_detail}
        self.webp_asked: list[int | None] = []

    def predict(self, codec: Codec, quality: int | None) -> float:
        if codec is WEBP:
            self.webp_asked.append(quality)
        return float(quality or 0) * (8 if codec is WEBP else 1)

    def similarity(self, codec: Codec, quality: int | None) -> float:
        return self.details[codec.media_type] - (95 - (quality or 0)) / 1000

    def full_encode(self, codec: Codec, quality: int | None) -> bytes:
        return b"x" * 100

    def calibrate(self, codec: Codec, quality: int | None, actual: int) -> None:
        pass


def _choose(probe: _FakeProbe) -> _at_size.Choice | None:
    fit_plan = _plan.plan(target(budget=1000), "image/png", 1, 1, (64, 64))
    attempt = _at_size.Attempt(probe, fit_plan, _at_size.Kind())  # type: ignore[arg-type]
    return _at_size._jpeg_if_better(attempt, _plan.WEBP_PHOTO_FLOOR)


def test_jpeg_beating_webp_top_quality_skips_the_webp_search() -> None:
    probe = _FakeProbe(jpeg_detail=0.99, webp_detail=0.95)
    chosen = _choose(probe)
    assert chosen is not None and chosen.codec.media_type == "image/jpeg"
    assert probe.webp_asked == []


def test_webp_within_reach_of_jpeg_is_still_searched() -> None:
    probe = _FakeProbe(jpeg_detail=0.95, webp_detail=0.99)
    assert _choose(probe) is None
    assert probe.webp_asked


def test_noisy_photo_keeps_its_size_rather_than_webp_q90() -> None:
    """It was shrunk to 767x669 to keep WebP at q90+ (SSIM 0.8456 at the original's size);
    whole as JPEG 4:2:0 q83 it keeps a little more (0.8466, bench_images.py's measure)."""
    buffer = io.BytesIO()
    Image.fromarray(skimage.data.hubble_deep_field()).save(buffer, "PNG")
    result = process_image(buffer.getvalue(), target())
    assert isinstance(result, ProcessedImage)
    assert (result.width, result.height) == (1000, 872)
