"""One image through the stage: passthrough, normalization, fitting and refusals."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest
from _image_samples import (
    animated,
    assert_fits,
    decode,
    encode,
    exif_orientation,
    photo,
    png_declaring,
    screenshot,
    swapped_primaries_profile,
    target,
)
from PIL import Image, ImageOps

from visiongate.adapters.images import (
    ImageTarget,
    ProcessedImage,
    RefusedImage,
    process_image,
    scale_note,
)
from visiongate.engine._settings import NativeSettings

JPEG_ONLY = ("image/jpeg",)


def processed(data: bytes, limits: ImageTarget) -> ProcessedImage:
    result = process_image(data, limits)
    assert isinstance(result, ProcessedImage), result
    return result


def refused(data: bytes, limits: ImageTarget | None = None) -> RefusedImage:
    result = process_image(data, limits or target())
    assert isinstance(result, RefusedImage), result
    assert result.reason.startswith("refused: ")
    assert result.reason == result.reason.lower() or "`" in result.reason
    assert "\n" not in result.reason and not result.reason.endswith(".")
    assert result.sha256 == hashlib.sha256(data).hexdigest()
    return result


def close(pixel: object, expected: tuple[int, ...], tolerance: int = 12) -> bool:
    values = pixel if isinstance(pixel, tuple) else (pixel,)
    return all(abs(int(a) - b) <= tolerance for a, b in zip(values, expected, strict=True))


# --- passthrough -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "GIF"])
def test_an_image_that_already_fits_passes_byte_for_byte(fmt: str) -> None:
    data = encode(screenshot(320, 200), fmt)
    result = processed(data, target())
    assert result.passthrough and result.data == data and result.encodes == 0
    assert result.sha256 == hashlib.sha256(data).hexdigest()
    assert result.scale_note == "original size 320x200; coordinates map 1:1"
    assert (result.scale_x, result.scale_y) == (1.0, 1.0)
    assert base64.b64decode(result.base64) == data


def test_a_format_the_provider_does_not_take_is_converted() -> None:
    data = encode(screenshot(320, 200), "PNG")
    result = processed(data, target(formats=JPEG_ONLY))
    assert not result.passthrough and result.media_type == "image/jpeg"
    assert result.source_media_type == "image/png"
    assert_fits(result, target(formats=JPEG_ONLY), (320, 200))


@pytest.mark.parametrize("fmt", ["BMP", "TIFF"])
def test_formats_no_provider_takes_are_converted(fmt: str) -> None:
    data = encode(screenshot(200, 120), fmt)
    result = processed(data, target())
    assert result.media_type in ("image/png", "image/jpeg", "image/webp")
    assert_fits(result, target(), (200, 120))


def test_over_the_ceiling_is_downscaled_with_a_scale_note() -> None:
    data = encode(screenshot(3840, 2160), "PNG")
    result = processed(data, target())
    assert (result.width, result.height) == (1568, 882)
    assert result.scale_x == pytest.approx(3840 / 1568)
    assert result.scale_y == pytest.approx(2160 / 882)
    assert result.scale_note == (
        "downscaled from 3840x2160 to 1568x882; multiply x by 2.449 and y by 2.449 "
        "to map to the original"
    )
    assert_fits(result, target(), (3840, 2160))


def test_a_text_screenshot_keeps_its_pixels_and_uses_few_encodes() -> None:
    data = encode(screenshot(1920, 1080), "PNG")
    result = processed(data, target())
    assert (result.width, result.height) == (1568, 882)
    assert result.encodes <= 3
    # JPEG where it keeps small text crisp (q80+), else WebP, which keeps more of it per byte
    # than JPEG's middle qualities (issue 34: bench_legibility.py's 2x spreadsheet).
    crisp_jpeg = result.media_type == "image/jpeg" and (result.quality or 0) >= 80
    assert crisp_jpeg or result.media_type == "image/webp"
    assert_fits(result, target(), (1920, 1080))
    without_webp = processed(data, target(("image/jpeg", "image/png", "image/gif")))
    assert without_webp.media_type == "image/jpeg" and (without_webp.quality or 0) >= 50
    assert (without_webp.width, without_webp.height) == (1568, 882)


def test_over_budget_photo_is_reencoded_within_budget() -> None:
    data = encode(photo(), "PNG")
    limits = target(budget=65_536)
    result = processed(data, limits)
    assert result.quality is not None and result.quality >= 40
    assert_fits(result, limits, (512, 512))


def test_a_tight_budget_shrinks_only_as_much_as_needed() -> None:
    data = encode(screenshot(1920, 1080), "PNG")
    limits = target(budget=40_000, formats=("image/jpeg", "image/webp"))
    result = processed(data, limits)
    assert 400 < result.width < 1568
    assert result.media_type == "image/webp"  # JPEG could not fit text at full size
    assert_fits(result, limits, (1920, 1080))


def test_text_no_lossy_floor_fits_goes_as_a_palette_png_before_shrinking_further() -> None:
    data = encode(screenshot(1920, 1080), "PNG")
    lossy = processed(data, target(budget=40_000, formats=("image/jpeg", "image/webp")))
    result = processed(data, target(budget=40_000))
    assert result.media_type == "image/png" and decode(result.data).mode == "P"
    assert result.width > lossy.width  # eight grey levels keep more pixels than WebP q40
    assert_fits(result, target(budget=40_000), (1920, 1080))


@pytest.mark.parametrize("formats", [("image/png",), ("image/gif",), ("image/webp",), JPEG_ONLY])
def test_each_single_output_format_fits(formats: tuple[str, ...]) -> None:
    limits = target(formats=formats, budget=120_000, edge=800)
    result = processed(encode(screenshot(1280, 720), "PNG"), limits)
    assert result.media_type == formats[0]
    assert_fits(result, limits, (1280, 720))


def test_an_extreme_strip_is_refused_not_attached_as_a_1568x2_sliver() -> None:
    data = encode(Image.new("RGB", (60000, 64), (200, 30, 30)), "PNG")
    result = refused(data)
    assert result.reason == (
        "refused: a 60000x64 strip would be 1568x2 at the 1568 px ceiling, under 13 px across: "
        "no fit of it shows anything"
    )


def test_a_thin_strip_that_still_shows_something_is_fitted() -> None:
    data = encode(Image.new("RGB", (4000, 34), (200, 30, 30)), "PNG")
    result = processed(data, target())
    assert (result.width, result.height) == (1568, 13)
    assert_fits(result, target(), (4000, 34))


# --- normalization ---------------------------------------------------------------------


def split(size: tuple[int, int]) -> Image.Image:
    """Left half red, right half blue."""
    image = Image.new("RGB", size, (0, 0, 255))
    image.paste((255, 0, 0), (0, 0, size[0] // 2, size[1]))
    return image


@pytest.mark.parametrize("orientation", [2, 3, 4, 5, 6, 7, 8])
def test_exif_orientation_is_applied(orientation: int) -> None:
    data = encode(split((60, 40)), "JPEG", quality=95, exif=exif_orientation(orientation))
    result = processed(data, target())
    expected = ImageOps.exif_transpose(decode(data))
    assert not result.passthrough
    assert (result.original_width, result.original_height) == expected.size
    output = decode(result.data).convert("RGB")
    assert output.size == expected.size
    for point in ((5, 5), (output.width - 5, output.height - 5)):
        assert close(output.getpixel(point), expected.getpixel(point), 40)


def test_orientation_and_downscale_together() -> None:
    data = encode(split((3000, 1000)), "JPEG", quality=90, exif=exif_orientation(8))
    result = processed(data, target())
    assert (result.width, result.height) == (523, 1568)
    assert (result.original_width, result.original_height) == (1000, 3000)
    assert_fits(result, target(), (1000, 3000))


def transparent_square() -> Image.Image:
    image = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    image.paste((0, 0, 0, 255), (16, 16, 48, 48))
    return image


def test_alpha_is_flattened_on_white_for_jpeg() -> None:
    result = processed(encode(transparent_square(), "PNG"), target(formats=JPEG_ONLY))
    output = decode(result.data)
    assert output.mode == "RGB"
    assert close(output.getpixel((2, 2)), (255, 255, 255))
    assert close(output.getpixel((32, 32)), (0, 0, 0))


def test_palette_transparency_is_flattened_for_jpeg() -> None:
    palette = Image.new("P", (64, 64), 0)
    palette.putpalette([255, 0, 0, 0, 0, 0])
    palette.paste(1, (16, 16, 48, 48))
    data = encode(palette, "PNG", transparency=0)
    output = decode(processed(data, target(formats=JPEG_ONLY)).data)
    assert close(output.getpixel((2, 2)), (255, 255, 255))
    assert close(output.getpixel((32, 32)), (0, 0, 0))


def test_alpha_is_kept_where_the_format_has_it() -> None:
    data = encode(transparent_square().resize((1600, 1600)), "PNG")
    result = processed(data, target(formats=("image/webp", "image/png")))
    output = decode(result.data)
    assert output.mode == "RGBA"
    assert output.getpixel((10, 10))[3] < 20 and output.getpixel((780, 780))[3] > 235


def test_fully_opaque_alpha_is_dropped() -> None:
    data = encode(screenshot(2000, 1200).convert("RGBA"), "PNG")
    result = processed(data, target())
    assert decode(result.data).mode in ("RGB", "L")


def test_sixteen_bit_grey_is_scaled_not_clipped() -> None:
    ramp = Image.new("I;16", (256, 16))
    ramp.putdata([x * 257 for _ in range(16) for x in range(256)])
    data = encode(ramp, "PNG")
    output = decode(processed(data, target(formats=JPEG_ONLY)).data)
    assert close(output.getpixel((128, 8)), (128,), 4)
    assert close(output.getpixel((250, 8)), (250,), 4)


def test_float_tiff_is_scaled() -> None:
    ramp = Image.new("F", (64, 8))
    ramp.putdata([x / 63 for _ in range(8) for x in range(64)])
    output = decode(processed(encode(ramp, "TIFF"), target()).data).convert("L")
    assert close(output.getpixel((63, 4)), (255,), 4)
    assert close(output.getpixel((0, 4)), (0,), 4)


def test_cmyk_jpeg_becomes_rgb() -> None:
    cyan = Image.new("CMYK", (64, 64), (255, 0, 0, 0))
    result = processed(encode(cyan, "JPEG", quality=95), target())
    assert not result.passthrough
    output = decode(result.data).convert("RGB")
    assert close(output.getpixel((32, 32)), (0, 255, 255), 20)


def test_bilevel_and_palette_images() -> None:
    bilevel = Image.new("1", (40, 40), 1)
    output = decode(processed(encode(bilevel, "BMP"), target()).data)
    assert close(output.convert("L").getpixel((5, 5)), (255,))
    palette = split((40, 40)).convert("P")
    output = decode(processed(encode(palette, "PNG"), target(formats=JPEG_ONLY)).data)
    assert close(output.getpixel((5, 5)), (255, 0, 0), 30)


@pytest.mark.parametrize("fmt", ["GIF", "PNG", "WEBP"])
def test_an_animation_sends_its_first_frame(fmt: str) -> None:
    data = animated(fmt, 3)
    result = processed(data, target())
    assert not result.passthrough
    output = decode(result.data)
    assert not getattr(output, "is_animated", False)
    assert close(output.convert("RGB").getpixel((10, 10)), (255, 0, 0), 30)
    assert result.scale_note.endswith("; first frame of 3")


# --- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason", "sniffed"),
    [
        (
            b"<svg xmlns='http://www.w3.org/2000/svg'/>",
            "refused: svg is not a raster image",
            "image/svg+xml",
        ),
        (b"<!doctype html><p>hi</p>", "refused: html is not an image", "text/html"),
        (b"%PDF-1.4 ...", "refused: pdf is not an image", "application/pdf"),
        (b"\x13\x37" * 500, "refused: unknown data, not a recognised image format", None),
        (b"", "refused: empty data", None),
        (
            b"\x00\x00\x00\x18ftypheic" + b"\x00" * 32,
            "refused: unsupported image format `image/heic`",
            "image/heic",
        ),
    ],
)
def test_non_images_are_refused_by_name(data: bytes, reason: str, sniffed: str | None) -> None:
    result = refused(data)
    assert (result.reason, result.sniffed) == (reason, sniffed)


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "WEBP"])
def test_truncated_images_are_refused(fmt: str) -> None:
    data = encode(photo(), fmt)
    result = refused(data[: len(data) * 2 // 3])
    kind = fmt.lower()
    assert result.reason.startswith(f"refused: {kind} image is truncated or corrupt")


def test_a_png_with_a_bad_crc_is_refused() -> None:
    data = bytearray(encode(photo(), "PNG"))
    data[len(data) // 2] ^= 0xFF
    assert "truncated or corrupt" in refused(bytes(data)).reason


def test_a_later_broken_frame_refuses_the_animation() -> None:
    data = animated("GIF", 4, (64, 64))
    assert "truncated or corrupt" in refused(data[: len(data) - 40]).reason


@pytest.mark.parametrize(
    ("size", "phrase"),
    [((9000, 9000), "67-megapixel decode limit"), ((100_000, 100_000), "too many pixels")],
)
def test_decompression_bombs_are_refused_from_the_header(
    size: tuple[int, int], phrase: str
) -> None:
    started = time.perf_counter()
    result = refused(png_declaring(*size))
    assert phrase in result.reason
    assert time.perf_counter() - started < 1.0


def test_too_many_frames_are_refused() -> None:
    data = animated("GIF", 300, (4, 4))
    assert refused(data).reason == "refused: animation has more than 256 frames"


def test_an_impossible_budget_is_refused() -> None:
    result = refused(encode(photo(), "PNG"), target(budget=64))
    assert result.reason.startswith("refused: cannot fit in 64 base64 bytes even at ")


# --- values ------------------------------------------------------------------------------


def test_target_takes_the_smaller_of_policy_and_provider() -> None:
    native = NativeSettings(embed_target_bytes=262_144, max_edge_px=1568)
    formats = ["image/png", "image/heic", "image/jpeg"]
    limits = ImageTarget.create(formats, native, 5_242_880, 8000)
    assert limits == ImageTarget(("image/png", "image/jpeg"), 262_144, 1568)
    assert ImageTarget.create(formats, native, 100_000, 1000).budget_base64 == 100_000
    assert ImageTarget.create(formats, native, 100_000, 1000).max_edge_px == 1000
    assert limits.budget_bytes == 196_608


@pytest.mark.parametrize(
    ("formats", "budget", "edge"),
    [
        ((), 1000, 100),
        (("image/heic",), 1000, 100),
        (("image/png",), 0, 100),
        (("image/png",), 10, 0),
    ],
)
def test_invalid_targets_are_programming_errors(
    formats: tuple[str, ...], budget: int, edge: int
) -> None:
    with pytest.raises(ValueError):
        ImageTarget(formats, budget, edge)


def test_scale_note_factors_are_precise_enough_to_click() -> None:
    assert scale_note(3000, 2000, 1500, 1000) == (
        "downscaled from 3000x2000 to 1500x1000; multiply x by 2.00 and y by 2.00 "
        "to map to the original"
    )
    assert "multiply x by 1.2245" in scale_note(1920, 1080, 1568, 882)
    assert scale_note(800, 600, 800, 600, frames=5) == (
        "original size 800x600; coordinates map 1:1; first frame of 5"
    )


def test_a_ceiling_above_webp_limits_falls_back_to_formats_that_can_store_it() -> None:
    data = encode(Image.new("RGB", (17_000, 8), (0, 90, 200)), "BMP")
    limits = target(formats=("image/webp", "image/png"), budget=1_000_000, edge=20_000)
    result = processed(data, limits)
    assert result.media_type == "image/png" and result.width == 17_000 and not result.passthrough
    refused(data, target(formats=("image/webp",), budget=1_000_000, edge=20_000))


def test_a_flat_diagram_stays_lossless_when_png_fits() -> None:
    diagram = Image.new("RGB", (3000, 1600), (255, 255, 255))
    for index in range(6):
        diagram.paste((30 * index, 90, 200), (100 + 450 * index, 200, 450 + 450 * index, 1400))
    result = processed(encode(diagram, "PNG"), target())
    assert result.media_type == "image/png" and result.quality is None
    assert_fits(result, target(), (3000, 1600))


def test_a_large_jpeg_is_drafted_and_fitted() -> None:
    data = encode(photo().resize((4096, 4096)), "JPEG", quality=90)
    limits = target(budget=1_048_576)
    result = processed(data, limits)
    assert (result.width, result.height) == (1568, 1568)
    assert result.encodes <= 2 and result.probe_encodes > 0
    assert result.scale_x == pytest.approx(4096 / 1568)
    assert_fits(result, limits, (4096, 4096))


def test_a_colour_profile_is_applied_to_the_pixels_and_never_sent() -> None:
    # The profile says the stored red is blue: the model must see blue, as a viewer shows it.
    data = encode(
        Image.new("RGB", (2000, 1000), (200, 30, 30)),
        "PNG",
        icc_profile=swapped_primaries_profile(),
    )
    result = processed(data, target())
    image = decode(result.data)
    assert "icc_profile" not in image.info and b"ICC" not in result.data
    red, _, blue = image.convert("RGB").getpixel((500, 500))
    assert blue > 150 > 50 > red
