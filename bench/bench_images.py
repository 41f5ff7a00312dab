"""Benchmark the image stage against the naive ladder agents use today; prints ratios.

    python bench/bench_images.py [--quick] [--repeats N] [--save DIR] [--only NAME]
                                 [--formats image/jpeg,image/png,...]
                                 [--pages] [--legibility] [--proxy] [--lone-image slot|turn]

Corpora (generated in memory, deterministic):
- photos: scikit-image's bundled sample photos, stored as PNG (as tools that render or
  screenshot a photo produce them);
- screenshots: synthetic desktops full of text and UI at 1280x720 ... 5120x2880, stored as PNG;
- large JPEG photos: the bundled photos upscaled to camera size with sensor-like noise and
  stored as JPEG q92 (synthetic; they exercise JPEG draft decoding);
- photos with metadata and a server's own JPEG (`_as_sent`): under the budget, as cameras and
  a DevTools server send them; the stage must keep their pixels exactly, in no more bytes.
`--pages` adds the full-page set (`_full_pages`: what local OCR reads back of 1280x6000,
1280x12000 and 1920x20000 pages), `--legibility` the measurements behind the legibility
scale and the strip minimum, `--proxy` a repeated 2560x1440 screenshot through
`visiongate proxy` (`_repeat`). The OCR parts take minutes. `--lone-image turn` fits as
`execution.native.lone_image: turn` does (a result's only image in the turn's room).

Baseline (same run): if the image does not already fit, JPEG at quality 85, 70, 50, then halve
both sides, repeated up to 5 times. "Fits" means the base64 text is within the budget and the
long edge within the ceiling, checked after each encode as a naive loop does.

Detail score: SSIM (RGB) of the output resized to a reference size (the original fitted to the
ceiling, never upscaled) against the original resized to that size, both with LANCZOS.
Floor: one decode, one resize and one encode that produce this stage's own output.
Time per image is the best of N runs (the machine is shared), then the median over images;
floor/ladder is the best time ratio any search could reach (the floor still pays our encode).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import skimage.data
from PIL import Image, JpegImagePlugin
from skimage.metrics import structural_similarity

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _as_sent import as_sent_summary, photos_with_metadata, server_jpeg
from _full_pages import legibility_report, page_report
from _pages import encoded
from _repeat import repeated_screenshot
from _screens import DARK, LIGHT, photo_from_array, screenshot

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_image
from visiongate.adapters.images._decode import fitted_size
from visiongate.adapters.images._encode import (
    GIF,
    JPEG_420,
    JPEG_444,
    PNG,
    WEBP,
    Codec,
    encode,
    prepare,
)
from visiongate.adapters.images._normalize import standard_mode
from visiongate.adapters.images._source import RESAMPLE
from visiongate.engine._settings import NativeSettings

FORMATS = ("image/jpeg", "image/png", "image/gif", "image/webp")
LADDER_QUALITIES = (85, 70, 50)
LADDER_HALVINGS = 5
SSIM_TOLERANCE = 0.002
PHOTOS = (
    "astronaut",
    "camera",
    "coffee",
    "chelsea",
    "rocket",
    "immunohistochemistry",
    "hubble_deep_field",
    "retina",
    "moon",
    "coins",
)
SCREEN_SIZES = ((1280, 720), (1920, 1080), (2560, 1440), (3840, 2160), (5120, 2880))
LARGE = (("astronaut", 4), ("coffee", 6), ("chelsea", 8), ("rocket", 6))


@dataclass(frozen=True)
class Sample:
    name: str
    data: bytes


@dataclass(frozen=True)
class Outcome:
    data: bytes
    width: int
    height: int
    encodes: int
    probes: int
    seconds: float
    label: str


@dataclass(frozen=True)
class Row:
    sample: Sample
    reference_pixels: int
    baseline: Outcome
    stage: Outcome
    floor_seconds: float
    baseline_ssim: float
    stage_ssim: float


def photo_corpus() -> list[Sample]:
    return [
        Sample(name, encoded(Image.fromarray(getattr(skimage.data, name)()))) for name in PHOTOS
    ]


def screenshot_corpus(quick: bool) -> list[Sample]:
    embedded = photo_from_array(skimage.data.chelsea())
    samples = []
    for index, (width, height) in enumerate(SCREEN_SIZES):
        themes = (LIGHT,) if quick else (LIGHT, DARK)
        for theme in themes:
            image = screenshot(width, height, seed=index, theme=theme, photo=embedded)
            tag = "light" if theme is LIGHT else "dark"
            samples.append(Sample(f"screen {width}x{height} {tag}", encoded(image)))
    return samples


def large_jpeg_corpus() -> list[Sample]:
    rng = np.random.default_rng(7)
    samples = []
    for name, factor in LARGE:
        photo = photo_from_array(getattr(skimage.data, name)())
        big = photo.resize((photo.width * factor, photo.height * factor), Image.Resampling.LANCZOS)
        noisy = np.asarray(big, dtype=np.float32) + rng.normal(0, 3.0, (big.height, big.width, 3))
        image = Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=92)
        samples.append(Sample(f"{name} {image.width}x{image.height} jpeg", buffer.getvalue()))
    return samples


def _b64(size: int) -> int:
    return 4 * ((size + 2) // 3)


def naive_ladder(data: bytes, target: ImageTarget) -> tuple[bytes, int, int, int]:
    """The ladder as agents write it: (bytes, width, height, encodes)."""
    image = Image.open(io.BytesIO(data))
    accepted = Image.MIME.get(image.format or "", "") in target.formats
    if (
        accepted
        and _b64(len(data)) <= target.budget_base64
        and max(image.size) <= target.max_edge_px
    ):
        return data, image.width, image.height, 0
    rgb = image.convert("RGB") if image.mode != "RGB" else image
    encodes = 0
    encoded = b""
    for _ in range(LADDER_HALVINGS + 1):
        for quality in LADDER_QUALITIES:
            buffer = io.BytesIO()
            rgb.save(buffer, "JPEG", quality=quality)
            encoded, encodes = buffer.getvalue(), encodes + 1
            if _b64(len(encoded)) <= target.budget_base64 and max(rgb.size) <= target.max_edge_px:
                return encoded, rgb.width, rgb.height, encodes
        rgb = rgb.resize(
            (max(1, rgb.width // 2), max(1, rgb.height // 2)), Image.Resampling.LANCZOS
        )
    return encoded, rgb.width * 2, rgb.height * 2, encodes


def single_pass(data: bytes, result: ProcessedImage, target: ImageTarget) -> None:
    """One decode, one resize, one encode producing the stage's own output."""
    image = Image.open(io.BytesIO(data))
    if image.format == "JPEG":
        image.draft(None, fitted_size(image.width, image.height, target.max_edge_px))
    image.load()
    if result.passthrough:
        return
    image = standard_mode(image)
    if image.size != (result.width, result.height):
        image = image.resize((result.width, result.height), RESAMPLE, reducing_gap=2.0)
    encode(prepare(image, _codec_of(result)), _codec_of(result), result.quality)


def _codec_of(result: ProcessedImage) -> Codec:
    if result.media_type == "image/jpeg":
        sampling = JpegImagePlugin.get_sampling(Image.open(io.BytesIO(result.data)))
        return JPEG_444 if sampling == 0 else JPEG_420
    return {"image/webp": WEBP, "image/png": PNG, "image/gif": GIF}[result.media_type]


def _best_of(repeats: int, run: Callable[[], object]) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
    return best, value


def _rgb_on_white(image: Image.Image) -> Image.Image:
    image = standard_mode(image)
    if image.mode in ("LA", "RGBA"):
        background = Image.new("RGB", image.size, (255, 255, 255))
        background.paste(image.convert("RGB"), mask=image.getchannel("A"))
        return background
    return image.convert("RGB")


def detail(original: Image.Image, reference: Image.Image, data: bytes) -> float:
    output = _rgb_on_white(Image.open(io.BytesIO(data)))
    if output.size != reference.size:
        output = output.resize(reference.size, Image.Resampling.LANCZOS)
    score = structural_similarity(
        np.asarray(reference), np.asarray(output), channel_axis=2, data_range=255
    )
    return float(score)


def measure(sample: Sample, target: ImageTarget, repeats: int) -> Row:
    base_time, base_value = _best_of(repeats, lambda: naive_ladder(sample.data, target))
    assert isinstance(base_value, tuple)
    base_data, base_width, base_height, base_encodes = base_value
    stage_time, result = _best_of(repeats, lambda: process_image(sample.data, target))
    assert isinstance(result, ProcessedImage), result
    floor_time, _ = _best_of(repeats, lambda: single_pass(sample.data, result, target))
    original = _rgb_on_white(Image.open(io.BytesIO(sample.data)))
    size = fitted_size(original.width, original.height, target.max_edge_px)
    reference = (
        original.resize(size, Image.Resampling.LANCZOS) if size != original.size else original
    )
    stage_label = (
        f"{result.media_type[6:]} q{result.quality}" if result.quality else result.media_type[6:]
    )
    if result.passthrough:
        stage_label = "passthrough"
    baseline = Outcome(
        base_data,
        base_width,
        base_height,
        base_encodes,
        0,
        base_time,
        "passthrough" if base_encodes == 0 else "jpeg",
    )
    stage = Outcome(
        result.data,
        result.width,
        result.height,
        result.encodes,
        result.probe_encodes,
        stage_time,
        stage_label,
    )
    return Row(
        sample,
        size[0] * size[1],
        baseline,
        stage,
        floor_time,
        detail(original, reference, base_data),
        detail(original, reference, result.data),
    )


def _ratio(value: float, against: float) -> str:
    return f"{value / against:.2f}x" if against else "n/a"


def print_rows(rows: list[Row]) -> None:
    print(
        f"  {'image':34} {'ladder out':>10} {'ssim':>6} {'ms':>6} | {'stage out':>10} "
        f"{'codec':>11} {'enc+probe':>9} {'ssim':>6} {'ms':>6} {'floor':>6}"
    )
    for row in rows:
        base, stage = row.baseline, row.stage
        print(
            f"  {row.sample.name:34} {base.width:>5}x{base.height:<4} {row.baseline_ssim:6.4f} "
            f"{base.seconds * 1000:6.1f} | {stage.width:>5}x{stage.height:<4} {stage.label:>11} "
            f"{stage.encodes:>4}+{stage.probes:<4} {row.stage_ssim:6.4f} "
            f"{stage.seconds * 1000:6.1f} {row.floor_seconds * 1000:6.1f}"
        )


def summarize(name: str, rows: list[Row]) -> list[str]:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    base_time = median([r.baseline.seconds for r in rows])
    stage_time = median([r.stage.seconds for r in rows])
    floor_time = median([r.floor_seconds for r in rows])
    base_pixels = median([r.baseline.width * r.baseline.height / r.reference_pixels for r in rows])
    stage_pixels = median([r.stage.width * r.stage.height / r.reference_pixels for r in rows])
    base_ssim = median([r.baseline_ssim for r in rows])
    stage_ssim = median([r.stage_ssim for r in rows])
    base_encodes = median([r.baseline.encodes for r in rows])
    stage_encodes = median([r.stage.encodes for r in rows])
    probes = median([r.stage.probes for r in rows])
    held = sum(r.stage_ssim >= r.baseline_ssim - SSIM_TOLERANCE for r in rows)
    encodes = f"ladder {base_encodes:g}  stage {stage_encodes:g}"
    return [
        f"{name} ({len(rows)} images)",
        f"  median encodes/image   {encodes} (+{probes:g} probe encodes of a ~320x320 sample)"
        f"  ratio {_ratio(stage_encodes, base_encodes)}",
        f"  median time/image      ladder {base_time * 1000:.1f} ms"
        f"  stage {stage_time * 1000:.1f} ms  ratio {_ratio(stage_time, base_time)}",
        f"  single-pass floor      {floor_time * 1000:.1f} ms"
        f"  stage/floor {_ratio(stage_time, floor_time)}"
        f"  floor/ladder {_ratio(floor_time, base_time)} (the bound on the time ratio)",
        f"  retained pixels        ladder {base_pixels:.3f}  stage {stage_pixels:.3f}"
        f"  ratio {_ratio(stage_pixels, base_pixels)}  (share of the ceiling-fitted original)",
        f"  detail (SSIM, median)  ladder {base_ssim:.4f}  stage {stage_ssim:.4f}"
        f"  ratio {_ratio(stage_ssim, base_ssim)}",
        f"  at least the ladder's detail (within {SSIM_TOLERANCE}) on {held}/{len(rows)} images",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer images, one run each")
    parser.add_argument("--repeats", type=int, default=None, help="runs per image (best is kept)")
    parser.add_argument("--save", type=Path, default=None, help="write the corpus here as files")
    parser.add_argument("--only", default="", help="run only corpora whose name contains this")
    parser.add_argument(
        "--formats", default=",".join(FORMATS), help="accepted media types, comma-separated"
    )
    parser.add_argument("--pages", action="store_true", help="add the full-page OCR set")
    parser.add_argument("--legibility", action="store_true", help="the legibility measurements")
    parser.add_argument("--proxy", action="store_true", help="a repeated screenshot via the proxy")
    parser.add_argument("--lone-image", choices=("slot", "turn"), default="slot")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    native = NativeSettings(lone_image=args.lone_image)
    target = ImageTarget.create(args.formats.split(","), native, None, None)
    print(
        f"target: {', '.join(target.formats)}; budget {target.budget_base64} base64 bytes; "
        f"ceiling {target.max_edge_px} px; best of {repeats} run(s) per image"
    )
    served = server_jpeg()
    corpora = {
        "photos (skimage, PNG)": photo_corpus(),
        "screenshots (PNG)": screenshot_corpus(args.quick),
        "large JPEG photos (synthetic)": large_jpeg_corpus()[: 2 if args.quick else None],
        "photos with metadata (under budget)": [
            Sample(name, data) for name, data in photos_with_metadata()
        ],
        "a server's JPEG (Chromium over CDP, 2560x1440 q80)": (
            [Sample("dashboard 2560x1440 jpeg", served)] if served is not None else []
        ),
    }
    if served is None:
        print("(no node or chromium: the server's JPEG is left out)")
    summaries: list[str] = []
    every_row: list[Row] = []
    for name, samples in corpora.items():
        if args.only not in name:
            continue
        if args.save is not None:
            args.save.mkdir(parents=True, exist_ok=True)
            for sample in samples:
                (args.save / (sample.name.replace(" ", "_") + ".img")).write_bytes(sample.data)
        if not samples:
            continue
        rows = [measure(sample, target, repeats) for sample in samples]
        print(f"\n{name}")
        print_rows(rows)
        summaries += ["", *summarize(name, rows)]
        if "metadata" in name or "server" in name:
            summaries += as_sent_summary(name, rows)
        every_row += rows
    if every_row:
        summaries += ["", *summarize("overall, every image of every corpus", every_row)]
    print("\n".join(summaries))
    for wanted, report in (
        (args.legibility, legibility_report),
        (args.pages, lambda: page_report(target, naive_ladder, args.quick, native)),
        (args.proxy, lambda: repeated_screenshot((2560, 1440), 5 if args.quick else 20)),
    ):
        if wanted:
            print("\n" + "\n".join(report()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
