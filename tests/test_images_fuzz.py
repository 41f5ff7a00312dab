"""Fuzz: mutated and truncated real files never raise out of the stage or attach anything broken."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest
from _image_samples import (
    animated,
    decode,
    encode,
    exif_orientation,
    photo,
    sniff_media_type,
    target,
)
from PIL import Image

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_image

CASES_PER_SEED = 500
TARGETS = (target(), target(formats=("image/png", "image/jpeg"), budget=6_000, edge=40))


def seeds() -> dict[str, bytes]:
    """Small valid files in every decodable format and many of their variants."""
    picture = photo().resize((48, 40))
    alpha = picture.convert("RGBA")
    alpha.putalpha(Image.linear_gradient("L").resize((48, 40)))
    wide = Image.linear_gradient("L").resize((40, 30)).convert("I").point(lambda v: v * 257)
    return {
        "png": encode(picture, "PNG"),
        "png-rgba": encode(alpha, "PNG"),
        "png-palette": encode(picture.convert("P"), "PNG", transparency=0),
        "png-16bit": encode(wide.convert("I;16"), "PNG"),
        "apng": animated("PNG", 3, (32, 24)),
        "jpeg": encode(picture, "JPEG", quality=80),
        "jpeg-progressive": encode(picture, "JPEG", quality=70, progressive=True),
        "jpeg-exif": encode(picture, "JPEG", exif=exif_orientation(6)),
        "jpeg-cmyk": encode(picture.convert("CMYK"), "JPEG"),
        "gif": encode(picture.convert("P"), "GIF"),
        "gif-animated": animated("GIF", 3, (32, 24)),
        "webp": encode(picture, "WEBP", quality=60),
        "webp-lossless": encode(alpha, "WEBP", lossless=True),
        "webp-animated": animated("WEBP", 3, (32, 24)),
        "bmp": encode(picture, "BMP"),
        "bmp-1bit": encode(picture.convert("1"), "BMP"),
        "tiff": encode(picture, "TIFF"),
        "tiff-lzw": encode(alpha, "TIFF", compression="tiff_lzw"),
        "tiff-deflate": encode(wide, "TIFF", compression="tiff_adobe_deflate"),
        "tiff-pages": encode(picture, "TIFF", save_all=True, append_images=[picture.rotate(90)]),
    }


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def _flip_bits(rng: random.Random, data: bytes) -> bytes:
    mutated = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8)
    return bytes(mutated)


def _overwrite(rng: random.Random, data: bytes) -> bytes:
    start = rng.randrange(len(data))
    return data[:start] + rng.randbytes(rng.randint(1, 32)) + data[start + 32 :]


def _header(rng: random.Random, data: bytes) -> bytes:
    """Sizes, counts and offsets live near the start: push one of those bytes to an extreme."""
    mutated = bytearray(data)
    mutated[rng.randrange(min(len(mutated), 64))] = rng.choice((0x00, 0x7F, 0xFF))
    return bytes(mutated)


def _insert(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    piece = data[rng.randrange(len(data)) :][: rng.randint(1, 200)]
    return data[:at] + piece + data[at:]


def _splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    return data[: rng.randrange(len(data))] + other[rng.randrange(len(other)) :]


MUTATIONS: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    _truncate,
    _flip_bits,
    _overwrite,
    _header,
    _insert,
)


def _check(data: bytes, limits: ImageTarget, outcomes: Counter[str]) -> None:
    result = process_image(data, limits)
    if not isinstance(result, ProcessedImage):
        assert result.reason.startswith("refused: ") and "\n" not in result.reason
        outcomes["refused"] += 1
        return
    image = decode(result.data)
    assert image.size == (result.width, result.height)
    assert sniff_media_type(result.data) == result.media_type in limits.formats
    assert len(result.base64) <= limits.budget_base64
    assert max(image.size) <= limits.max_edge_px
    assert not result.passthrough or result.data == data
    outcomes["passthrough" if result.passthrough else "attached"] += 1


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_mutated_files_never_escape_or_attach_broken(
    record_property: Callable[[str, object], None],
) -> None:
    rng = random.Random(20260830)
    files = seeds()
    names = sorted(files)
    outcomes: Counter[str] = Counter()
    for name in names:
        for case in range(CASES_PER_SEED):
            data = files[name]
            mutation = MUTATIONS[case % len(MUTATIONS)]
            mutated = (
                mutation(rng, data) if case % 11 else _splice(rng, data, files[rng.choice(names)])
            )
            _check(mutated, TARGETS[case % len(TARGETS)], outcomes)
    total = sum(outcomes.values())
    record_property("fuzz_cases", total)
    print(f"\nfuzz: {total} cases over {len(names)} seed files: {dict(outcomes)}")
    assert total == len(names) * CASES_PER_SEED >= 2000
    assert outcomes["refused"] and outcomes["attached"]
