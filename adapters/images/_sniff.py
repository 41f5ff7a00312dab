"""Identify image data by its leading bytes; a MIME type declared by a tool is never trusted."""

from __future__ import annotations

from typing import Final

DECODABLE: Final[dict[str, str]] = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/gif": "GIF",
    "image/webp": "WEBP",
    "image/bmp": "BMP",
    "image/tiff": "TIFF",
}
"""Media types this stage decodes, with the Pillow plugin that may open each."""

NOT_IMAGES: Final[dict[str, str]] = {
    "image/svg+xml": "svg is not a raster image",
    "text/html": "html is not an image",
    "application/pdf": "pdf is not an image",
}
"""Recognised non-raster data, with the reason it is refused."""

_PREFIXES: Final[tuple[tuple[bytes, str], ...]] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"II+\x00", "image/tiff"),
    (b"MM\x00+", "image/tiff"),
    (b"%PDF-", "application/pdf"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"8BPS", "image/vnd.adobe.photoshop"),
    (b"\xff\x0a", "image/jxl"),
    (b"\x00\x00\x00\x0cJXL \r\n\x87\n", "image/jxl"),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", "image/jp2"),
)

# Sizes of the BMP info headers Pillow understands; "BM" alone also starts ordinary text.
_BMP_HEADER_SIZES: Final = frozenset({12, 40, 52, 56, 64, 108, 124})

_AVIF_BRANDS: Final = frozenset({b"avif", b"avis"})
_HEIF_BRANDS: Final = frozenset(
    {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
)

_TEXT_HEAD: Final = 1024
_HTML_MARKERS: Final = (b"<!doctype html", b"<html", b"<head", b"<body", b"<script")


def sniff_media_type(data: bytes) -> str | None:
    """The media type that `data` really is, from its magic bytes, or None when unknown.

    Raster types this stage decodes are listed in `DECODABLE`; SVG, HTML and PDF are
    recognised so they can be refused by name.
    """
    for prefix, media_type in _PREFIXES:
        if data.startswith(prefix):
            return media_type
    return _sniff_container(data) or _sniff_bmp(data) or _sniff_markup(data)


def _sniff_container(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        if brand in _AVIF_BRANDS:
            return "image/avif"
        if brand in _HEIF_BRANDS:
            return "image/heic"
    return None


def _sniff_bmp(data: bytes) -> str | None:
    if data[:2] != b"BM" or len(data) < 18:
        return None
    header_size = int.from_bytes(data[14:18], "little")
    return "image/bmp" if header_size in _BMP_HEADER_SIZES else None


def _sniff_markup(data: bytes) -> str | None:
    head = data[:_TEXT_HEAD].lstrip(b"\xef\xbb\xbf").lstrip().lower()
    if not head.startswith(b"<"):
        return None
    svg_at = head.find(b"<svg")
    html_at = min((at for marker in _HTML_MARKERS if (at := head.find(marker)) >= 0), default=-1)
    # An HTML page may inline an <svg>; whichever element opens first names the document.
    if svg_at >= 0 and (html_at < 0 or svg_at < html_at):
        return "image/svg+xml"
    return "text/html" if html_at >= 0 else None
