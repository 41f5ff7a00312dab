"""Property: any valid image and any budget in range yields a fitting attachment or a reason."""

from __future__ import annotations

import random
from dataclasses import dataclass

from _image_samples import ALL_FORMATS, assert_fits, encode, exif_orientation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_image
from visiongate.adapters.images._tiles import strip_reason

# Pillow writers and the modes each accepts (as generated here).
WRITERS: dict[str, tuple[str, ...]] = {
    "PNG": ("1", "L", "LA", "P", "RGB", "RGBA", "I;16"),
    "JPEG": ("L", "RGB", "CMYK"),
    "GIF": ("L", "P", "RGB"),
    "WEBP": ("L", "RGB", "RGBA"),
    "BMP": ("1", "L", "P", "RGB", "RGBA"),
    "TIFF": ("L", "LA", "RGB", "RGBA", "CMYK", "I;16", "F"),
}
EXIF_WRITERS = ("JPEG", "PNG", "WEBP")
ANIMATED_WRITERS = ("GIF", "PNG", "WEBP")


@dataclass(frozen=True)
class Sample:
    data: bytes
    displayed: tuple[int, int]


def _pixels(rng: random.Random, mode: str, size: tuple[int, int], content: str) -> Image.Image:
    width, height = size
    if content == "noise":
        base = Image.frombytes("RGBA", size, rng.randbytes(width * height * 4))
    elif content == "flat":
        base = Image.new("RGBA", size, tuple(rng.randrange(256) for _ in range(4)))
    else:
        gradient = Image.linear_gradient("L").resize(size)
        base = Image.merge("RGBA", (gradient, gradient.rotate(90), gradient, gradient))
    if mode == "I;16":
        wide = base.convert("L").convert("I").point(lambda value: value * 257)
        return wide.convert("I;16")
    if mode == "F":
        return base.convert("L").convert("F").point(lambda value: value / 255)
    return base.convert(mode)


@st.composite
def samples(draw: st.DrawFn) -> Sample:
    fmt = draw(st.sampled_from(sorted(WRITERS)))
    mode = draw(st.sampled_from(WRITERS[fmt]))
    size = (draw(st.integers(1, 300)), draw(st.integers(1, 300)))
    rng = random.Random(draw(st.integers(0, 2**32)))
    content = draw(st.sampled_from(["noise", "flat", "gradient"]))
    image = _pixels(rng, mode, size, content)
    options: dict[str, object] = {}
    orientation = 1
    if fmt in EXIF_WRITERS and mode in ("L", "RGB", "RGBA"):
        orientation = draw(st.sampled_from([1, 1, 3, 6, 8, 5]))
        options["exif"] = exif_orientation(orientation)
    if fmt in ANIMATED_WRITERS and draw(st.booleans()):
        other = _pixels(rng, mode, size, "noise")
        options.update(save_all=True, append_images=[other], duration=40)
    if fmt in ("JPEG", "WEBP"):
        options["quality"] = draw(st.integers(30, 100))
    displayed = (size[1], size[0]) if orientation in (5, 6, 7, 8) else size
    return Sample(encode(image, fmt, **options), displayed)


@st.composite
def targets(draw: st.DrawFn) -> ImageTarget:
    order = draw(st.permutations(ALL_FORMATS))
    count = draw(st.integers(1, len(order)))
    budget = draw(st.integers(200, 300_000))
    return ImageTarget(tuple(order[:count]), budget, draw(st.integers(8, 400)))


@settings(max_examples=160, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=samples(), limits=targets())
def test_output_fits_or_is_refused_with_a_reason(sample: Sample, limits: ImageTarget) -> None:
    result = process_image(sample.data, limits)
    if isinstance(result, ProcessedImage):
        assert_fits(result, limits, sample.displayed)
        assert not result.passthrough or result.data == sample.data or result.metadata_removed
    else:
        # The inputs are valid images: the only acceptable refusals are a budget too small and
        # a strip the ceiling would make too thin to show anything.
        strip = strip_reason(*sample.displayed, limits.max_edge_px)
        if strip is not None:
            assert result.reason == strip
        else:
            assert result.reason.startswith("refused: cannot fit in "), result.reason
