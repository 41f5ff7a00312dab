"""A cheap structural-similarity score, in Pillow alone, to compare two encodings of a sample.

SSIM over non-overlapping 8x8 windows, per RGB band, on a grid offset by 4 px so that JPEG's
8x8 blocks straddle windows (an aligned grid hides blocking and favours JPEG). On the bench's
photos and screenshots it ranked JPEG against WebP the same way as full SSIM (scikit-image,
7x7 sliding windows) in every case tried.
"""

from __future__ import annotations

from typing import Any, Final

from PIL import Image, ImageMath

WINDOW: Final = 8
_OFFSET: Final = WINDOW // 2
_C1: Final = (0.01 * 255) ** 2
_C2: Final = (0.03 * 255) ** 2


def similarity(reference: Image.Image, candidate: Image.Image) -> float:
    """Mean windowed SSIM of `candidate` against `reference` (same size), 1.0 when identical."""
    first, second = _rgb(reference), _rgb(candidate)
    bands = zip(first.split(), second.split(), strict=True)
    scores = [_band_similarity(x, y) for x, y in bands]
    return sum(scores) / len(scores)


def _rgb(image: Image.Image) -> Image.Image:
    if image.mode in ("LA", "RGBA"):
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image.convert("RGB"), mask=image.getchannel("A"))
        image = background
    image = image.convert("RGB")
    box = (_OFFSET, _OFFSET, image.width - _OFFSET, image.height - _OFFSET)
    return image.crop(box) if min(image.size) > 3 * WINDOW else image


def _band_similarity(first: Image.Image, second: Image.Image) -> float:
    x, y = first.convert("F"), second.convert("F")
    mean_x, mean_y = x.reduce(WINDOW), y.reduce(WINDOW)
    xx, yy, xy = (_product(a, b).reduce(WINDOW) for a, b in ((x, x), (y, y), (x, y)))
    scores = ImageMath.lambda_eval(_ssim, mx=mean_x, my=mean_y, xx=xx, yy=yy, xy=xy, c1=_C1, c2=_C2)
    # ImageStat bins float images into 256 buckets; a box resize to one pixel is the exact mean.
    mean = scores.resize((1, 1), Image.Resampling.BOX).getpixel((0, 0))
    return float(mean) if isinstance(mean, (int, float)) else 0.0


def _product(first: Image.Image, second: Image.Image) -> Any:
    return ImageMath.lambda_eval(lambda args: args["a"] * args["b"], a=first, b=second)


def _ssim(args: dict[str, Any]) -> Any:
    mx, my, c1, c2 = args["mx"], args["my"], args["c1"], args["c2"]
    variance_x = args["xx"] - mx * mx
    variance_y = args["yy"] - my * my
    covariance = args["xy"] - mx * my
    return ((2 * mx * my + c1) * (2 * covariance + c2)) / (
        (mx * mx + my * my + c1) * (variance_x + variance_y + c2)
    )
