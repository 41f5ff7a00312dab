"""One image through the stage: sniff, bound, pass through or normalize and fit, or tile.

An image goes as the tool encoded it whenever it can (`_container.passthrough`: its metadata removed
whole, nothing re-encoded). Otherwise it is decoded and fitted; a re-encode of an image that
was already in an accepted format first aims at no more bytes than it had (a 2560x1440
screenshot JPEG of 107 KB must not come back as a 1568x882 JPEG of 168 KB, re-sent on every
later request), and takes the rest of the budget only if that cannot be done at the quality
floors. A strip too thin to show anything is refused; a tall or wide capture the ceiling would
shrink below legibility becomes tiles (`_tiles`), when the caller asks for them. A part a model
asks for (`image_part`) is cut from the original at 1:1.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Final

from .._part_request import PartError, PartRequest
from ._container.passthrough import Header, pass_through, read_header
from ._container.repair import drop_unused_chunks
from ._decode import DecodedImage, decode, fitted_size
from ._encode import PNG, encode
from ._fitting import fit, plan
from ._sniff import DECODABLE, NOT_IMAGES, sniff_media_type
from ._source import SourceImage
from ._tiles import TallSettings, TileLayout, factor, strip_reason, tile_layout, tile_note
from ._types import (
    MEMORY_REFUSAL,
    ImageTarget,
    ProcessedImage,
    Refusal,
    RefusedImage,
    Region,
    TiledImage,
    Uncovered,
)

Processed = ProcessedImage | RefusedImage | TiledImage

LEGIBLE_SCALE: Final = 0.9
"""The least share of its size 16 px text at 1x keeps legible (bench_images.py --legibility:
local OCR reads 88% of its words at 0.9, 60% at 0.8)."""


def process_image(data: bytes, target: ImageTarget) -> ProcessedImage | RefusedImage:
    """`data` made ready for `target` as one image, or refused with a reason; never raises."""
    result = process_with_digest(data, target, hashlib.sha256(data).hexdigest())
    assert not isinstance(result, TiledImage)  # only asked-for tiles are made
    return result


def process_with_digest(
    data: bytes, target: ImageTarget, digest: str, tall: TallSettings | None = None
) -> Processed:
    """`process_image` for a caller that already hashed `data`; with `tall`, a tall or wide
    capture may come back as tiles."""
    sniffed = sniff_media_type(data)
    try:
        return _budgeted(_process(data, target, digest, sniffed, tall), target)
    except Refusal as refusal:
        return RefusedImage(reason=refusal.reason, sha256=digest, sniffed=sniffed)
    except MemoryError:
        # One image too large for what is left of the memory loses its slot, not the call.
        return RefusedImage(reason=MEMORY_REFUSAL, sha256=digest, sniffed=sniffed)


def _budgeted(result: Processed, target: ImageTarget) -> Processed:
    """`result` with the room and budget it was fitted in (tiles carry their own), for the
    record; tagged here, so a cached result keeps its identity (and its rendered base64)."""
    if not isinstance(result, ProcessedImage):
        return result
    return dataclasses.replace(result, room=target.room, budget_base64=target.budget_base64)


def _process(
    data: bytes, target: ImageTarget, digest: str, sniffed: str | None, tall: TallSettings | None
) -> Processed:
    media_type = _decodable(data, sniffed)
    repaired = _repaired(data, sniffed)
    header = read_header(repaired, media_type)
    width, height = header.displayed
    reason = strip_reason(width, height, target.max_edge_px)
    if reason is not None:
        raise Refusal(reason)
    layout = tile_layout(width, height, target.max_edge_px, tall) if tall else None
    if layout is not None and tall is not None:
        return _tiled(repaired, header, target, digest, layout, tall)
    passed = pass_through(data, header, target)
    if passed is not None:
        sent, decoded, removed = passed
        size = (decoded.width, decoded.height)
        processed = _processed(decoded, digest, data=sent, media_type=media_type, size=size)
        return dataclasses.replace(processed, passthrough=True, metadata_removed=removed)
    return _fitted(repaired, len(data), media_type, target, digest)


def _repaired(data: bytes, sniffed: str | None) -> bytes:
    # A bad CRC in an ancillary chunk is discarded, as libpng and browsers do, and so is
    # text, which Pillow refuses to inflate past its limit.
    return drop_unused_chunks(data) if sniffed == "image/png" else data


def _fitted(
    data: bytes, source_bytes: int, media_type: str, target: ImageTarget, digest: str
) -> ProcessedImage:
    decoded, pixels = decode(data, media_type, target.max_edge_px)
    size = fitted_size(decoded.width, decoded.height, target.max_edge_px)
    pixel_count = decoded.source_width * decoded.source_height
    fit_plan = plan(target, decoded.media_type, len(data), pixel_count, size)
    if media_type in target.formats:
        fit_plan = dataclasses.replace(fit_plan, source_bytes=source_bytes)
    # The source takes the decoded pixels over: from here the working copy is all there is.
    source = SourceImage(pixels, decoded, size)
    del pixels
    encoded = fit(source, size, fit_plan)
    processed = _processed(
        decoded,
        digest,
        data=encoded.data,
        media_type=encoded.media_type,
        size=(encoded.width, encoded.height),
        quality=encoded.quality,
        encodes=encoded.encodes,
        probes=encoded.probes,
    )
    kept = max(encoded.width, encoded.height) / max(size)
    if kept >= 1:
        return processed
    note = processed.scale_note + legibility_note(kept, target.max_edge_px)
    return dataclasses.replace(processed, kept_scale=round(kept, 3), scale_note=note)


def legibility_note(kept: float, max_edge: int) -> str:
    """What the model is told when the budget took pixels, not only quality: below
    `LEGIBLE_SCALE` of the size small text is drawn at, it may no longer read."""
    if kept >= LEGIBLE_SCALE:
        return ""
    return (
        f"; the byte budget kept only {kept:.0%} of the {max_edge} px size, so small text may "
        "be unreadable: ask for a region of the original to read it"
    )


def _tiled(
    data: bytes,
    header: Header,
    target: ImageTarget,
    digest: str,
    layout: TileLayout,
    tall: TallSettings,
) -> TiledImage:
    width, height = header.displayed
    whole = (max(1, round(width * layout.scale)), max(1, round(height * layout.scale)))
    tiles: list[ProcessedImage] = []
    why = _why_uncovered(layout, width, height, target.max_edge_px)
    if layout.tiles:
        decoded, pixels = decode(data, header.media_type, max(whole))
        source = SourceImage(pixels, decoded, whole).upright()
        del pixels
        left = tall.budget_base64
        per_tile = min(target.budget_base64, tall.tile_budget_base64 or target.budget_base64)
        for index in range(len(layout.tiles)):
            budget = per_tile
            if left is not None:
                budget = min(per_tile, max(4, left // (len(layout.tiles) - index)))
            tile_target = dataclasses.replace(target, budget_base64=budget, room="slot")
            try:
                tile = _tile(source, decoded, tile_target, digest, layout, index, len(data))
            except Refusal as refusal:
                layout = layout.keeping(index, tall.slots)
                why = refusal.reason.removeprefix("refused: ")
                break
            tiles.append(dataclasses.replace(tile, budget_base64=budget))
            if left is not None:
                left -= 4 * ((len(tile.data) + 2) // 3)
    return TiledImage(tuple(tiles), _uncovered(layout, why), digest)


def _why_uncovered(layout: TileLayout, width: int, height: int, max_edge: int) -> str:
    if layout.tiles:
        return (
            f"{len(layout.tiles)} tile(s) at scale {layout.scale:.2f}, the least that keeps "
            "text legible, take every image slot left in this result"
        )
    fitted = fitted_size(width, height, max_edge)
    return (
        "the policy sends captures this tall or wide as text (`tall_images: text`); fitted "
        f"whole it would be {fitted[0]}x{fitted[1]}"
    )


def _tile(
    source: SourceImage,
    decoded: DecodedImage,
    target: ImageTarget,
    digest: str,
    layout: TileLayout,
    index: int,
    source_bytes: int,
) -> ProcessedImage:
    region = layout.tiles[index]
    size = layout.size(region)
    share = region.width * region.height / (decoded.width * decoded.height)
    pixel_count = round(decoded.source_width * decoded.source_height * share)
    fit_plan = plan(target, decoded.media_type, round(source_bytes * share), pixel_count, size)
    view = source.region(region.left, region.top, region.right, region.bottom)
    encoded = fit(view, size, fit_plan)
    shown = (encoded.width, encoded.height)
    note = tile_note(
        index + 1, len(layout.tiles), layout.axis, region, (decoded.width, decoded.height), shown
    )
    processed = _processed(
        decoded,
        digest,
        data=encoded.data,
        media_type=encoded.media_type,
        size=shown,
        quality=encoded.quality,
        encodes=encoded.encodes,
        probes=encoded.probes,
    )
    return dataclasses.replace(
        processed,
        scale_x=region.width / shown[0],
        scale_y=region.height / shown[1],
        scale_note=note,
        region=region,
    )


def region_png(data: bytes, region: Region) -> bytes:
    """The `region` of an image (as displayed) at 1:1, as PNG: what a backend that describes
    images is given for a part no tile shows. Blocking; raises `Refusal` for bad data."""
    media_type = _decodable(data, sniff_media_type(data))
    decoded, pixels = decode(_repaired(data, media_type), media_type, 1 << 20)
    size = (decoded.width, decoded.height)
    source = SourceImage(pixels, decoded, size).upright()
    del pixels
    view = source.region(region.left, region.top, region.right, region.bottom)
    return encode(view.at((region.width, region.height)), PNG, None)


def _uncovered(layout: TileLayout, reason: str) -> Uncovered | None:
    if layout.uncovered is None:
        return None
    width, height = layout.original
    return Uncovered(layout.uncovered, width, height, layout.axis, reason, layout.pieces)


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


def _processed(
    decoded: DecodedImage,
    digest: str,
    *,
    data: bytes,
    media_type: str,
    size: tuple[int, int],
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
        passthrough=False,
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
            f"multiply x by {factor(original_width / width)} and y by "
            f"{factor(original_height / height)} to map to the original"
        )
    return note + (f"; first frame of {frames}" if frames > 1 else "")


@dataclass(frozen=True)
class ImagePart:
    """A part cut from an original: its pixels at 1:1 as PNG, where it lies, and how the
    model maps it back (`note`)."""

    data: bytes
    region: Region
    original: tuple[int, int]

    @property
    def note(self) -> str:
        return part_note(self.region, *self.original)


def image_part(data: bytes, request: PartRequest) -> ImagePart:
    """The part of `data` (as displayed) that `request` asks for; `PartError` for a request
    outside the image or data that is no image it can cut (blocking: it decodes)."""
    sniffed = sniff_media_type(data)
    try:
        if sniffed is None or sniffed not in DECODABLE:
            raise Refusal("refused: not a recognised image format")
        width, height = read_header(data, sniffed).displayed
        region = Region(*request.within(width, height))
        return ImagePart(region_png(data, region), region, (width, height))
    except (Refusal, MemoryError) as error:
        reason = error.reason if isinstance(error, Refusal) else "not enough memory"
        cause = reason.removeprefix("refused: ")
        raise PartError(f"no part of this image can be cut ({cause})") from error


def part_note(region: Region, width: int, height: int) -> str:
    """`region 0,6000 1280x1568 of the 1280x12000 original (add left and top to map x and y
    back to it)`: one line the model reads with the part."""
    return (
        f"the region left {region.left}, top {region.top}, {region.width}x{region.height} of "
        f"the {width}x{height} original; add {region.left} to x and {region.top} to y to map "
        "back to it"
    )
