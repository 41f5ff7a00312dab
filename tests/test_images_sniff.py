"""Media types come from magic bytes, never from what a tool declared."""

from __future__ import annotations

import pytest
from _image_samples import encode, photo
from PIL import Image

from visiongate.adapters.images import sniff_media_type

SMALL = Image.new("RGB", (8, 8), (10, 20, 30))


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [
        ("PNG", "image/png"),
        ("JPEG", "image/jpeg"),
        ("GIF", "image/gif"),
        ("WEBP", "image/webp"),
        ("BMP", "image/bmp"),
        ("TIFF", "image/tiff"),
    ],
)
def test_raster_formats_are_known_by_their_bytes(fmt: str, media_type: str) -> None:
    assert sniff_media_type(encode(SMALL, fmt)) == media_type


def test_big_endian_tiff_and_lossless_webp() -> None:
    assert sniff_media_type(b"MM\x00*\x00\x00\x00\x08") == "image/tiff"
    assert sniff_media_type(encode(photo(), "WEBP", lossless=True)) == "image/webp"


@pytest.mark.parametrize(
    "text",
    [
        b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>',
        b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>',
        b"\xef\xbb\xbf  \n<!-- drawn by hand -->\n<svg viewBox='0 0 1 1'></svg>",
        b"<!DOCTYPE svg PUBLIC '-//W3C//DTD SVG 1.1//EN' 'x'><svg/>",
    ],
)
def test_svg_is_recognised_so_it_can_be_refused(text: bytes) -> None:
    assert sniff_media_type(text) == "image/svg+xml"


@pytest.mark.parametrize(
    "text",
    [
        b"<!doctype html><html><body><svg></svg></body></html>",
        b"  <HTML><head><title>x</title></head></HTML>",
        b"<script>alert(1)</script>",
    ],
)
def test_html_is_recognised_even_with_inline_svg(text: bytes) -> None:
    assert sniff_media_type(text) == "text/html"


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (b"%PDF-1.7\n%...", "application/pdf"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00", "image/heic"),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00", "image/avif"),
        (b"\x00\x00\x01\x00\x01\x00\x10\x10", "image/x-icon"),
    ],
)
def test_other_known_types(data: bytes, media_type: str) -> None:
    assert sniff_media_type(data) == media_type


@pytest.mark.parametrize(
    "data",
    [b"", b"hello world", b"BMW is a car brand", b"\x00" * 64, b"<note>xml, not svg</note>"],
)
def test_unknown_data_is_none(data: bytes) -> None:
    assert sniff_media_type(data) is None


def test_a_declared_type_cannot_change_the_answer() -> None:
    jpeg = encode(SMALL, "JPEG")
    assert sniff_media_type(b"data:image/png;base64," + jpeg) is None
    assert sniff_media_type(jpeg) == "image/jpeg"
