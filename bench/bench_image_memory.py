"""Peak memory and time of the image stage on its worst cases, each in a fresh subprocess.

    python bench/bench_image_memory.py [--quick] [--only NAME] [--python INTERPRETER]

Each case is written to a temporary file. A child process imports the stage, reads the file,
resets its resident-set high-water mark (/proc/self/clear_refs) and runs one step; the peak is
the high-water mark minus the resident set just before the step. Per case, in the same run:
- decoded: the decoded frame at its full size, width x height x bytes per pixel as Pillow
  holds it (RGB takes four), in the mode Pillow decodes to or in the 8-bit mode the stage
  converts to, whichever is larger (a palette image with transparency becomes RGBA);
- pillow load: the peak of `Image.open(path).load()` alone, the decode every stage pays;
- stage: the peak and time of `process_image` with the default target (1568 px, 256 KiB).
Goal (issue 13): stage peak <= 2x decoded. The batch case sends four translucent 5120x2880
screenshots as one MCP result through `ImageWorker` (its default 2 threads and 1 GiB budget).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

_BYTES_PER_PIXEL = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2}
_STANDARD_BYTES_PER_PIXEL = {"1": 1, "L": 1, "I": 1, "I;16": 1, "I;16B": 1, "F": 1}
EDGE = 8192


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], list[bytes]]
    batch: bool = False


def _save(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def _canvas(mode: str, colour: tuple[int, ...] | int) -> Image.Image:
    """A large image with structure: a gradient, stripes and a grid, as diagrams have."""
    image = Image.linear_gradient("L").resize((EDGE, EDGE)).convert(mode)
    draw = ImageDraw.Draw(image)
    for offset in range(0, EDGE, 256):
        draw.line((0, offset, EDGE, offset), fill=colour, width=3)
        draw.line((offset, 0, offset, EDGE), fill=colour, width=3)
    return image


def _translucent() -> Image.Image:
    image = Image.new("RGBA", (EDGE, EDGE), (30, 60, 90, 128))
    draw = ImageDraw.Draw(image)
    for offset in range(0, EDGE, 256):
        draw.line((0, offset, EDGE, offset), fill=(255, 0, 0, 200), width=3)
    return image


def _gradients(mode: str) -> Image.Image:
    """Many colours and, in RGBA, an alpha gradient: libwebp then decodes through full-size
    buffers of its own (a few colours fit a packed palette)."""
    red = Image.linear_gradient("L").resize((EDGE, EDGE))
    image = Image.merge(
        "RGB",
        (
            red,
            red.transpose(Image.Transpose.ROTATE_90),
            Image.radial_gradient("L").resize(red.size),
        ),
    )
    if mode == "RGBA":
        image.putalpha(red.transpose(Image.Transpose.ROTATE_180))
    return image


def _screen_rgba(seed: int) -> Image.Image:
    # Imported here: the child may run on another interpreter (`--python`) without numpy.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _screens import screenshot

    image = screenshot(5120, 2880, seed=seed).convert("RGBA")
    image.putalpha(200)
    return image


CASES = (
    Case("png rgba 8192x8192 translucent", lambda: [_save(_translucent(), "PNG")]),
    Case(
        "webp lossless rgba 8192x8192",
        lambda: [_save(_translucent(), "WEBP", lossless=True, method=0)],
    ),
    Case("webp lossy rgb 8192x8192", lambda: [_save(_canvas("RGB", (200, 30, 30)), "WEBP")]),
    Case(
        "webp lossless rgba 8192x8192 gradients",
        lambda: [_save(_gradients("RGBA"), "WEBP", lossless=True, method=0)],
    ),
    Case("webp lossy rgba 8192x8192 gradients", lambda: [_save(_gradients("RGBA"), "WEBP")]),
    Case("jpeg rgb 8192x8192", lambda: [_save(_canvas("RGB", (200, 30, 30)), "JPEG")]),
    Case(
        "jpeg rgb 8192x8192 progressive",
        lambda: [_save(_canvas("RGB", (200, 30, 30)), "JPEG", progressive=True)],
    ),
    Case("png rgb 8192x8192", lambda: [_save(_canvas("RGB", (200, 30, 30)), "PNG")]),
    Case(
        "png palette+alpha 8192x8192",
        lambda: [_save(_canvas("P", 7), "PNG", transparency=0)],
    ),
    Case("png grey 16-bit 8192x8192", lambda: [_save(_canvas("I;16", 4000), "PNG")]),
    Case("gif 8192x8192", lambda: [_save(_canvas("P", 7), "GIF")]),
    Case("screen rgba 5120x2880", lambda: [_save(_screen_rgba(0), "PNG")]),
    Case(
        "mcp result: 4 x screen rgba 5120x2880",
        lambda: [_save(_screen_rgba(seed), "PNG") for seed in range(4)],
        batch=True,
    ),
)
QUICK = ("png rgba 8192x8192 translucent", "jpeg rgb 8192x8192", "screen rgba 5120x2880")


# --- child ----------------------------------------------------------------------------------


def _resident_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _measure(step: Callable[[], object]) -> tuple[float, float, object]:
    """(peak MB above the resident set before, seconds, result) of one step."""
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current resident set
    before = _resident_kib("VmRSS")
    start = time.perf_counter()
    result = step()
    seconds = time.perf_counter() - start
    return (_resident_kib("VmHWM") - before) / 1024, seconds, result


def child(kind: str, paths: list[str]) -> None:
    images = [Path(path).read_bytes() for path in paths]
    if kind == "load":

        def step() -> object:
            with Image.open(io.BytesIO(images[0])) as image:
                image.load()
                return image.size

    else:
        from visiongate.adapters.images import ImageTarget, ImageWorker, process_image
        from visiongate.engine._settings import NativeSettings

        native = NativeSettings()
        target = ImageTarget.create(
            ("image/jpeg", "image/png", "image/gif", "image/webp"), native, None, None
        )

        def step() -> object:
            if kind == "batch":
                with ImageWorker() as worker:
                    batch = asyncio.run(worker.process_images(images, target, native))
                return f"{len(batch.attached)} attached"
            outcome = process_image(images[0], target)
            return getattr(outcome, "media_type", None) or getattr(outcome, "reason", "")

    peak, seconds, result = _measure(step)
    print(json.dumps({"peak": peak, "seconds": seconds, "result": str(result)}))


# --- parent ---------------------------------------------------------------------------------


def _run_child(kind: str, paths: list[Path], python: str = sys.executable) -> dict[str, object]:
    command = [python, __file__, "--child", kind, *map(str, paths)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(output.strip().splitlines()[-1]))


def _decoded_mb(data: bytes) -> float:
    """The larger of the frame as Pillow decodes it and in the stage's standard mode."""
    with Image.open(io.BytesIO(data)) as image:
        width, height = image.size
        per_pixel = max(
            _BYTES_PER_PIXEL.get(image.mode, 4), _STANDARD_BYTES_PER_PIXEL.get(image.mode, 4)
        )
        return width * height * per_pixel / (1 << 20)


def run_case(case: Case, folder: Path, python: str) -> str:
    images = case.build()
    paths = []
    for index, data in enumerate(images):
        path = folder / f"{case.name.replace(' ', '_')}-{index}.img"
        path.write_bytes(data)
        paths.append(path)
    decoded = sum(_decoded_mb(data) for data in images)
    load = _run_child("load", paths[:1])
    stage = _run_child("batch" if case.batch else "stage", paths, python)
    load_peak, peak = float(load["peak"]), float(stage["peak"])  # type: ignore[arg-type]
    seconds = float(stage["seconds"])  # type: ignore[arg-type]
    size_kb = sum(len(data) for data in images) / 1024
    return (
        f"  {case.name:40} {size_kb:>9.0f} {decoded:>8.0f} {load_peak:>8.0f} {peak:>8.0f} "
        f"{peak / decoded:>6.2f}x {peak / load_peak if load_peak else 0:>6.2f}x "
        f"{seconds:>7.2f}  {stage['result']}"
    )


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--child"]:
        child(arguments[1], arguments[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--only", default="", help="run only cases whose name contains this")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter whose installed visiongate the stage runs on (e.g. an older release)",
    )
    args = parser.parse_args(arguments)
    print(
        f"  {'case':40} {'file KB':>9} {'decoded':>8} {'load MB':>8} {'stage MB':>8} "
        f"{'/decoded':>7} {'/load':>7} {'stage s':>7}  outcome"
    )
    with tempfile.TemporaryDirectory() as folder:
        for case in CASES:
            if args.only in case.name and (not args.quick or case.name in QUICK):
                print(run_case(case, Path(folder), args.python), flush=True)
    print("decoded: the full-size frame in Pillow; load: the peak of Pillow's decode alone")
    print("stage/decoded is the issue-13 goal (<= 2x); the batch row sums four images")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
