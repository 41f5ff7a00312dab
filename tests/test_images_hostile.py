"""Bytes that are not the image (issue 12) and encoders that fail on metadata (issue 13).

Pass-through means exactly one well-formed image, fully decoded at its declared size, with
nothing else in the bytes; everything else is re-encoded from the decoded pixels (which
writes nothing but pixels) or refused with the reason.
"""

from __future__ import annotations

import struct
import zlib

import pytest
from _image_samples import (
    ALL_FORMATS,
    adam7_png,
    decode,
    encode,
    lying,
    photo,
    png_chunk,
    screenshot,
    target,
)
from _lying_images import INJECTION, LyingImage, lying_images
from PIL import Image

from visiongate.adapters.images import ProcessedImage, RefusedImage, process_image, process_images
from visiongate.adapters.images._container.structure import layout
from visiongate.adapters.images._encode import JPEG_444
from visiongate.adapters.images._encode import encode as encode_pixels
from visiongate.adapters.images._types import Refusal
from visiongate.engine._settings import NativeSettings

SINGLE_FORMATS = [(media_type,) for media_type in ALL_FORMATS]


def _attached(data: bytes, formats: tuple[str, ...] = ALL_FORMATS) -> ProcessedImage:
    result = process_image(data, target(formats=formats))
    assert isinstance(result, ProcessedImage), result
    return result


def _bare(result: ProcessedImage) -> None:
    """The attachment is one image and nothing else, and carries no trace of the payload."""
    assert layout(result.data, result.media_type).bare, layout(result.data, result.media_type)
    assert INJECTION.encode()[:15] not in result.data
    assert not {"comment", "exif", "xmp", "icc_profile"} & set(decode(result.data).info)


@pytest.mark.parametrize("formats", [ALL_FORMATS, *SINGLE_FORMATS], ids=lambda f: ",".join(f))
@pytest.mark.parametrize("sample", lying_images(), ids=lambda sample: sample.name)
def test_lying_images_are_cleaned_or_refused_never_passed_as_sent(
    sample: LyingImage, formats: tuple[str, ...]
) -> None:
    result = process_image(sample.data, target(formats=formats))
    if sample.outcome == "refused":
        assert isinstance(result, RefusedImage)
        assert result.reason.startswith("refused: ") and "\n" not in result.reason
        return
    assert isinstance(result, ProcessedImage), result
    assert result.data != sample.data
    # Metadata alone is removed whole (no re-encode); anything else is re-encoded.
    assert not result.passthrough or result.metadata_removed
    assert sample.hidden is None or sample.hidden not in result.data
    _bare(result)


def test_a_png_with_html_after_iend_is_not_passed_through_byte_for_byte() -> None:
    result = _attached(lying("png-html-after-iend"))
    assert b"<html>" not in result.data and result.media_type == "image/png"
    assert decode(result.data).tobytes() == decode(lying("png-html-after-iend")).tobytes()


def test_a_png_whose_zlib_stream_holds_half_the_rows_is_refused() -> None:
    result = process_image(lying("png-half-the-rows"), target())
    assert isinstance(result, RefusedImage)
    assert result.reason == (
        "refused: png pixel data ends before the image is filled (320x200 declared)"
    )


def test_a_jpeg_whose_sof_claims_8192_over_640x480_data_is_refused() -> None:
    result = process_image(lying("jpeg-sof-8192"), target())
    assert isinstance(result, RefusedImage)
    assert "jpeg scan data ends before the image is filled (8192x8192 declared)" in result.reason


def test_a_jpeg_one_row_of_blocks_short_is_refused_too() -> None:
    for name in ("jpeg-sof-one-row-more", "jpeg-restarts-missing"):
        assert isinstance(process_image(lying(name), target()), RefusedImage), name


def test_a_gif_with_a_1mb_comment_becomes_a_jpeg_without_it() -> None:
    result = _attached(lying("gif-1mb-comment"), ("image/jpeg",))
    assert result.media_type == "image/jpeg"
    _bare(result)


def test_one_bad_image_does_not_fail_the_batch() -> None:
    good = encode(screenshot(200, 120), "PNG")
    images = [lying("gif-1mb-comment"), lying("png-half-the-rows"), good]
    batch = process_images(images, target(formats=("image/jpeg",)), NativeSettings())
    assert batch.attached_indexes == (0, 2)
    assert [index for index, _ in batch.refused] == [1]


def test_an_encoder_exception_is_a_refusal_not_an_escape() -> None:
    with pytest.raises(Refusal, match=r"^refused: the jpeg encoder failed \(cannot write mode"):
        encode_pixels(Image.new("I;16", (8, 8)), JPEG_444, 90)


def test_an_encoder_never_copies_metadata_from_the_image_info() -> None:
    image = Image.new("RGB", (16, 16), (10, 200, 30))
    image.info.update(comment=b"x" * 70_000, icc_profile=b"y" * 500, exif=b"Exif\x00\x00z")
    data = encode_pixels(image, JPEG_444, 90)
    assert b"xxxx" not in data and b"yyyy" not in data
    assert layout(data, "image/jpeg").bare


# -- what must still pass through, or be attached -------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"progressive": True}, {"optimize": True}, {"restart_marker_blocks": 4}],
    ids=["baseline", "progressive", "optimized", "restart-markers"],
)
def test_well_formed_jpegs_pass_through(options: dict[str, object]) -> None:
    data = encode(photo().resize((320, 320)), "JPEG", quality=85, **options)
    result = _attached(data)
    assert result.passthrough and result.data == data


def test_a_jpeg_ending_in_mid_grey_is_checked_and_kept() -> None:
    picture = photo().resize((160, 160))
    picture.paste((128, 128, 128), (96, 96, 160, 160))
    data = encode(picture, "JPEG", quality=90)
    assert decode(data).getpixel((159, 159)) == (128, 128, 128)
    assert _attached(data).passthrough


@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P"])
def test_a_png_whose_last_row_is_zero_bytes_is_counted_and_kept(mode: str) -> None:
    picture = screenshot(200, 120).convert(mode)
    picture.paste(0, (0, 110, 200, 120))  # black, transparent black or palette index 0
    data = encode(picture, "PNG")
    result = _attached(data)
    assert result.passthrough and result.data == data


def test_an_interlaced_png_is_counted_and_kept() -> None:
    data = adam7_png(screenshot(61, 37))
    assert decode(data).tobytes() == screenshot(61, 37).convert("L").tobytes()
    result = _attached(data)
    assert result.passthrough and result.data == data


def test_an_interlaced_png_short_of_its_last_pass_is_refused() -> None:
    result = process_image(adam7_png(screenshot(61, 37), passes=6), target())
    assert isinstance(result, RefusedImage)
    assert "png pixel data ends before the image is filled (61x37 declared)" in result.reason


def test_data_after_the_last_row_inside_the_zlib_stream_is_not_passed_through() -> None:
    picture = screenshot(64, 40)
    raw = picture.tobytes()
    rows = b"".join(b"\x00" + raw[y * 192 : (y + 1) * 192] for y in range(40))
    data = (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 40, 8, 2, 0, 0, 0))
        + png_chunk(b"IDAT", zlib.compress(rows + _HIDDEN))
        + png_chunk(b"IEND", b"")
    )
    result = _attached(data)
    assert not result.passthrough
    assert decode(result.data).tobytes() == raw


_HIDDEN = b"<html>" + INJECTION.encode() + b"</html>"
