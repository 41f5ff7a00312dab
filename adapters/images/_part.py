"""Cut the part of an image a model asked for (`.._part_request`) from the original, at 1:1.

The request is parsed and checked without the image stage loaded (the proxy reads it before
the stage is imported); cutting decodes the original, off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._part_request import PartError, PartRequest
from ._container.passthrough import read_header
from ._process import region_png
from ._sniff import DECODABLE, sniff_media_type
from ._types import Refusal, Region


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
