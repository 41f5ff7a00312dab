"""One image through the stage: sniff, bound, decode, pass through or normalize and fit."""

from __future__ import annotations

import hashlib

from ._decode import DecodedImage, decode, fitted_size
from ._fit import fit, plan
from ._repair import drop_unused_chunks
from ._sniff import DECODABLE, NOT_IMAGES, sniff_media_type
from ._source import SourceImage
from ._types import ImageTarget, ProcessedImage, Refusal, RefusedImage


def process_image(data: bytes, target: ImageTarget) -> ProcessedImage | RefusedImage:
    """`data` made ready for `target`, or refused with a reason; bad data never raises."""
    return process_with_digest(data, target, hashlib.sha256(data).hexdigest())


def process_with_digest(
    data: bytes, target: ImageTarget, digest: str
) -> ProcessedImage | RefusedImage:
    """`process_image` for a caller that already hashed `data`."""
    sniffed = sniff_media_type(data)
    try:
        return _process(data, target, digest, sniffed)
    except Refusal as refusal:
        return RefusedImage(reason=refusal.reason, sha256=digest, sniffed=sniffed)
    except MemoryError:
        # One image too large for what is left of the memory loses its slot, not the call.
        return RefusedImage(
            reason="refused: not enough memory to process this image",
            sha256=digest,
            sniffed=sniffed,
        )


def _process(data: bytes, target: ImageTarget, digest: str, sniffed: str | None) -> ProcessedImage:
    original = data
    media_type = _decodable(data, sniffed)
    if sniffed == "image/png":
        # A bad CRC in an ancillary chunk is discarded, as libpng and browsers do, and so is
        # text; the repaired file is re-encoded, as passthrough promises the tool's bytes.
        data = drop_unused_chunks(data)
    may_pass = data is original and _bytes_fit(data, media_type, target)
    decoded, pixels = decode(data, media_type, target.max_edge_px, exact=may_pass)
    if may_pass and _passes_through(decoded, target):
        return _processed(
            decoded,
            digest,
            data=data,
            media_type=decoded.media_type,
            size=(decoded.width, decoded.height),
            passthrough=True,
        )
    size = fitted_size(decoded.width, decoded.height, target.max_edge_px)
    fit_plan = plan(
        target, decoded.media_type, len(data), decoded.source_width * decoded.source_height, size
    )
    # The source takes the decoded pixels over: from here the working copy is all there is.
    source = SourceImage(pixels, decoded, size)
    del pixels
    encoded = fit(source, size, fit_plan)
    return _processed(
        decoded,
        digest,
        data=encoded.data,
        media_type=encoded.media_type,
        size=(encoded.width, encoded.height),
        quality=encoded.quality,
        encodes=encoded.encodes,
        probes=encoded.probes,
    )


def _decodable(data: bytes, sniffed: str | None) -> str:
    if not data:
        raise Refusal("refused: empty data")
    if sniffed is None:
        raise Refusal("refused: unknown data, not a recognised image format")
    if sniffed in NOT_IMAGES:
        raise Refusal(f"refused: {NOT_IMAGES[sniffed]}")
    if sniffed not in DECODABLE:
        raise Refusal(f"refused: unsupported image format `{sniffed}`")
    return sniffed


def base64_length(size: int) -> int:
    """Characters of base64 text for `size` bytes."""
    return 4 * ((size + 2) // 3)


def _bytes_fit(data: bytes, media_type: str, target: ImageTarget) -> bool:
    """Whether the bytes as they are could be sent: a format and a size the provider takes."""
    return media_type in target.formats and base64_length(len(data)) <= target.budget_base64


def _passes_through(decoded: DecodedImage, target: ImageTarget) -> bool:
    """Whether the decoded image needs no change a model would notice, and the bytes hold
    exactly that image: one frame, fully decoded, with nothing before or after it."""
    return (
        decoded.bare
        and max(decoded.width, decoded.height) <= target.max_edge_px
        and decoded.frames == 1
        and decoded.orientation == 1
        # Providers decode CMYK JPEG inconsistently (often with inverted colours).
        and decoded.mode != "CMYK"
    )


def _processed(
    decoded: DecodedImage,
    digest: str,
    *,
    data: bytes,
    media_type: str,
    size: tuple[int, int],
    passthrough: bool = False,
    quality: int | None = None,
    encodes: int = 0,
    probes: int = 0,
) -> ProcessedImage:
    width, height = size
    return ProcessedImage(
        data=data,
        media_type=media_type,
        width=width,
        height=height,
        original_width=decoded.width,
        original_height=decoded.height,
        scale_x=decoded.width / width,
        scale_y=decoded.height / height,
        scale_note=scale_note(decoded.width, decoded.height, width, height, decoded.frames),
        passthrough=passthrough,
        encodes=encodes,
        sha256=digest,
        source_media_type=decoded.media_type,
        quality=quality,
        probe_encodes=probes,
    )


def scale_note(
    original_width: int, original_height: int, width: int, height: int, frames: int = 1
) -> str:
    """One line a model can use to map coordinates in the sent image back to the original."""
    if (width, height) == (original_width, original_height):
        note = f"original size {width}x{height}; coordinates map 1:1"
    else:
        note = (
            f"downscaled from {original_width}x{original_height} to {width}x{height}; "
            f"multiply x by {_factor(original_width / width)} and y by "
            f"{_factor(original_height / height)} to map to the original"
        )
    return note + (f"; first frame of {frames}" if frames > 1 else "")


def _factor(value: float) -> str:
    """Two decimals, more (up to four) only when they change where a click lands."""
    text = f"{value:.4f}"
    while text.endswith("0") and len(text.split(".")[1]) > 2:
        text = text[:-1]
    return text
