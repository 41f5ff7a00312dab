"""A PNG whose only defect is a bad CRC in an ancillary chunk is shown, as every viewer does."""

from __future__ import annotations

import io
import struct

from PIL import Image, ImageCms

from visiongate.adapters import ImageTarget, ProcessedImage, RefusedImage, process_image
from visiongate.adapters.images._container.repair import drop_corrupt_ancillary_chunks
from visiongate.engine import NativeSettings

TARGET = ImageTarget.create(("image/png", "image/jpeg"), NativeSettings(), None, None)


def _png_with_profile() -> bytes:
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    buffer = io.BytesIO()
    Image.new("RGBA", (20, 20), (30, 120, 200, 255)).save(buffer, "PNG", icc_profile=profile)
    return buffer.getvalue()


def _chunks(data: bytes) -> list[tuple[bytes, int]]:
    found, position = [], 8
    while position < len(data):
        (length,) = struct.unpack_from(">I", data, position)
        found.append((data[position + 4 : position + 8], position))
        position += 12 + length
    return found


def _break_crc(data: bytes, chunk_type: bytes) -> bytes:
    position = next(at for kind, at in _chunks(data) if kind == chunk_type)
    (length,) = struct.unpack_from(">I", data, position)
    crc_at = position + 8 + length
    (crc,) = struct.unpack_from(">I", data, crc_at)
    return data[:crc_at] + struct.pack(">I", crc ^ 0xFFFF) + data[crc_at + 4 :]


def test_a_bad_crc_in_iccp_is_dropped_and_the_image_is_attached() -> None:
    original = _png_with_profile()
    broken = _break_crc(original, b"iCCP")
    result = process_image(broken, TARGET)
    assert isinstance(result, ProcessedImage), result
    assert (result.width, result.height) == (20, 20)
    assert b"iCCP" not in result.data
    assert Image.open(io.BytesIO(result.data)).getpixel((5, 5))[:3] == (30, 120, 200)


def test_a_bad_crc_in_a_critical_chunk_is_still_refused() -> None:
    broken = _break_crc(_png_with_profile(), b"IDAT")
    result = process_image(broken, TARGET)
    assert isinstance(result, RefusedImage)
    assert "corrupt" in result.reason


def test_a_clean_png_is_returned_as_the_same_object() -> None:
    assert drop_corrupt_ancillary_chunks(profiled := _png_with_profile()) is profiled
    buffer = io.BytesIO()
    Image.new("RGBA", (20, 20), (30, 120, 200, 128)).save(buffer, "PNG")
    clean = buffer.getvalue()
    assert drop_corrupt_ancillary_chunks(clean) is clean
    assert process_image(clean, TARGET).data == clean  # type: ignore[union-attr]


def test_data_that_is_not_a_chunk_sequence_is_left_to_the_decoder() -> None:
    truncated = _break_crc(_png_with_profile(), b"iCCP")[:40]
    assert drop_corrupt_ancillary_chunks(truncated) == truncated
    assert isinstance(process_image(truncated, TARGET), RefusedImage)
