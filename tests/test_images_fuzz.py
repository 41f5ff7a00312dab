"""Fuzz: mutated and truncated real files never raise out of the stage or attach anything broken."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest
from _image_samples import (
    ALL_FORMATS,
    animated,
    decode,
    encode,
    exif_orientation,
    photo,
    sniff_media_type,
    target,
)
from PIL import Image, ImageCms
from PIL.PngImagePlugin import PngInfo

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_image
from visiongate.adapters.images._container.repair import drop_unused_chunks
from visiongate.adapters.images._container.structure import layout

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
    if result.passthrough and result.data != data:
        # Metadata removed whole: the same pixels (as libpng shows a PNG whose ancillary chunk
        # is corrupt, which Pillow refuses), in fewer bytes.
        assert result.metadata_removed and len(result.data) < len(data)
        assert decode(drop_unused_chunks(data)).tobytes() == image.tobytes()
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


# -- metadata-laden inputs: every encoder, every output format ---------------------------------

MARKER = b"VGMARK"
METADATA_CASES = 400
SINGLE_TARGETS = tuple(target(formats=(media_type,), budget=40_000) for media_type in ALL_FORMATS)


def _text(rng: random.Random) -> bytes:
    """The marker padded to a size from a few bytes to past the JPEG segment limit (65533)."""
    size = rng.choice((8, 300, 4_000, 65_000, 65_534, 70_000, 1_048_576))
    return (MARKER + rng.randbytes(16).hex().encode()) * (size // 38 + 1)


def _picture(rng: random.Random) -> Image.Image:
    mode = rng.choice(("RGB", "RGBA", "L", "LA", "P"))
    base = photo().resize((rng.randint(8, 96), rng.randint(8, 96)))
    return base.convert(mode) if mode != "RGBA" else _translucent(base)


def _translucent(base: Image.Image) -> Image.Image:
    image = base.convert("RGBA")
    image.putalpha(Image.linear_gradient("L").resize(base.size))
    return image


def _with_metadata(rng: random.Random) -> tuple[str, bytes]:
    """A small image of a random mode, with large and odd metadata in a random format."""
    picture, text = _picture(rng), _text(rng)
    kind = rng.choice(("gif", "png", "jpeg", "webp", "tiff"))
    exif = Image.Exif()
    exif[0x010E] = text[:60_000].decode()  # ImageDescription
    profile = rng.choice((_SRGB, rng.randbytes(rng.choice((128, 600, 20_000))), text[:30_000]))
    if kind == "gif":
        return kind, encode(picture.convert("P"), "GIF", comment=text)
    if kind == "png":
        info = PngInfo()
        info.add_text("Comment", text.decode(), zip=rng.random() < 0.5)
        info.add_itxt("XML:com.adobe.xmp", text.decode(), zip=rng.random() < 0.5)
        return kind, encode(picture, "PNG", pnginfo=info, exif=exif, icc_profile=profile)
    if kind == "jpeg":
        jpeg = picture.convert("RGB" if picture.mode in ("RGBA", "LA", "P") else picture.mode)
        return kind, encode(jpeg, "JPEG", comment=text[:65_533], exif=exif.tobytes()[:65_000])
    if kind == "webp":
        return kind, encode(picture.convert("RGBA"), "WEBP", xmp=text, exif=exif.tobytes())
    return kind, encode(picture, "TIFF", description=text.decode(), icc_profile=_SRGB)


_SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_metadata_laden_inputs_never_raise_and_leave_no_metadata(
    record_property: Callable[[str, object], None],
) -> None:
    """Encoders used to copy a source's metadata (a 1 MB GIF comment made JPEG raise)."""
    rng = random.Random(20261130)
    outcomes: Counter[str] = Counter()
    for _ in range(METADATA_CASES):
        kind, data = _with_metadata(rng)
        for limits in (rng.choice(SINGLE_TARGETS), TARGETS[0]):
            result = process_image(data, limits)
            if isinstance(result, ProcessedImage):
                assert MARKER not in result.data, kind
                assert layout(result.data, result.media_type).bare, kind
                info = decode(result.data).info
                assert not {"comment", "exif", "xmp", "icc_profile"} & set(info), kind
            outcomes[f"{kind} {type(result).__name__}"] += 1
    total = sum(outcomes.values())
    record_property("metadata_fuzz_cases", total)
    print(f"\nmetadata fuzz: {total} cases: {dict(sorted(outcomes.items()))}")
    assert total == 2 * METADATA_CASES
    assert not any("Refused" in outcome for outcome in outcomes), outcomes
