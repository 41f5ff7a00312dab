"""What a vision model can read of a busy page in what the image stage sends; prints ratios.

    python bench/bench_legibility.py [--repeats N] [--only NAME] [--formats ...] [--save DIR]
                                     [--lone-image slot|turn]

The corpus (`_busy_pages`) is a handful of pages on which bytes are expensive: captioned
photo galleries, a textured map, text over noise and gradients, a dark dashboard, a dense 2x
spreadsheet, an article with a hero photo, each carrying labels of random words at 11-16 CSS
px at 1x or 2x. The judge is local OCR (RapidOCR, the text lane's own backend, detection at
full size): a label is readable in the source when OCR reads it there, and the score of what
is sent is the share of those it still reads, at the label's own position.

Three contenders in the same run, at the default budget and ceiling of a vision model:
- `stage`: `process_image`, what the native lane sends, once per route: one that takes WebP
  (Anthropic, OpenAI, Gemini) and one that does not (Fireworks: JPEG, PNG, GIF), each its own
  table (`--formats` measures one route of your choosing instead);
- `ladder`: the naive halving ladder the seed's agent used (JPEG q85, 70, 50, then halve);
- `ceiling`: the source resized to the ceiling, lossless: what any fitter could keep at best
  (it ignores the budget, so it only bounds the score).
Time is the best of N runs per page, then the median over pages, stage against ladder.
`--lone-image turn` fits each page as a result's only image in the turn's room
(`max_images` x `embed_target_bytes`), as `execution.native.lone_image: turn` does; the stage
runs through `process_images`, the batch the native lane calls, either way.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _busy_pages import BusyPage, busy_pages
from _pages import Word, encoded
from _words_read import Box, words_in_boxes
from bench_images import FORMATS, naive_ladder

from visiongate.adapters.images import ImageTarget, ProcessedImage, process_images
from visiongate.adapters.images._decode import fitted_size
from visiongate.adapters.images._source import RESAMPLE
from visiongate.adapters.vision._ocr import LocalOCRBackend
from visiongate.adapters.vision._tuning import OcrSettings
from visiongate.engine._settings import NativeSettings

GOAL_EVERY = 0.90
GOAL_MEDIAN = 0.97


@dataclass(frozen=True)
class Sent:
    data: bytes
    width: int
    height: int
    label: str
    seconds: float


@dataclass(frozen=True)
class Row:
    page: str
    readable: int
    stage: Sent
    stage_score: float
    ladder: Sent
    ladder_score: float
    ceiling_score: float


@dataclass(frozen=True)
class Route:
    """The formats one route accepts, named for the tables."""

    name: str
    formats: tuple[str, ...]


ROUTES = (
    Route("with WebP", FORMATS),
    Route("without WebP", tuple(f for f in FORMATS if f != "image/webp")),
)


@dataclass(frozen=True)
class Reference:
    """What does not depend on the route: the source's, the ladder's and the ceiling's reads."""

    source: set[int]
    ladder: Sent
    ladder_score: float
    ceiling_score: float


@cache
def judge() -> LocalOCRBackend:
    # Detection at the source's own size: the reference reading must not be the weak one.
    return LocalOCRBackend(OcrSettings(det_max_side=3000))


def boxes_of(image: Image.Image, scale: tuple[float, float]) -> list[Box]:
    reading = judge()._read(np.asarray(image.convert("RGB")), digest="", recent=())
    sx, sy = scale
    return [
        Box(b.left * sx, b.top * sy, b.right * sx, b.bottom * sy, b.text.replace(" ", "").lower())
        for b in reading.boxes
    ]


def read(data: bytes, words: tuple[Word, ...], source: tuple[int, int]) -> set[int]:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        scale = (source[0] / image.width, source[1] / image.height)
        return words_in_boxes(words, boxes_of(image, scale))


def _best_of(repeats: int, run):  # type: ignore[no-untyped-def]
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - started)
    return best, value


def _label(result: ProcessedImage) -> str:
    if result.passthrough:
        return "as is"
    kind = result.media_type.removeprefix("image/")
    return f"{kind} q{result.quality}" if result.quality else kind


def reference(page: BusyPage, target: ImageTarget, repeats: int) -> Reference:
    data = encoded(page.image)
    size = page.image.size
    ladder_time, ladder = _best_of(repeats, lambda: naive_ladder(data, target))
    source = words_in_boxes(page.words, boxes_of(page.image, (1.0, 1.0)))
    ceiling_size = fitted_size(*size, target.max_edge_px)
    ceiling = page.image.resize(ceiling_size, RESAMPLE, reducing_gap=2.0)
    ceiling_read = read(encoded(ceiling), page.words, size) & source
    ladder_read = read(ladder[0], page.words, size) & source
    return Reference(
        source,
        Sent(ladder[0], ladder[1], ladder[2], "jpeg" if ladder[3] else "as is", ladder_time),
        _share(ladder_read, source),
        _share(ceiling_read, source),
    )


def measure(
    page: BusyPage, target: ImageTarget, native: NativeSettings, repeats: int, known: Reference
) -> Row:
    data = encoded(page.image)
    stage_time, batch = _best_of(repeats, lambda: process_images([data], target, native))
    (stage,) = batch.attached
    stage_read = read(stage.data, page.words, page.image.size) & known.source
    return Row(
        page.name,
        len(known.source),
        Sent(stage.data, stage.width, stage.height, _label(stage), stage_time),
        _share(stage_read, known.source),
        known.ladder,
        known.ladder_score,
        known.ceiling_score,
    )


def _share(found: set[int], source: set[int]) -> float:
    return len(found) / max(1, len(source))


def _b64(size: int) -> int:
    return 4 * ((size + 2) // 3)


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| page | labels read in the source | sent | base64 | score | ladder sent | ladder base64 "
        "| ladder score | ceiling score |",
        "|---|---:|---|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        stage, ladder = row.stage, row.ladder
        lines.append(
            f"| {row.page} | {row.readable} | {stage.width}x{stage.height} {stage.label} "
            f"| {_b64(len(stage.data))} | {row.stage_score:.0%} "
            f"| {ladder.width}x{ladder.height} {ladder.label} | {_b64(len(ladder.data))} "
            f"| {row.ladder_score:.0%} | {row.ceiling_score:.0%} |"
        )
    return lines


def summary(rows: list[Row]) -> list[str]:
    stage_scores = [r.stage_score for r in rows]
    ladder_scores = [r.ladder_score for r in rows]
    stage_time = statistics.median(r.stage.seconds for r in rows)
    ladder_time = statistics.median(r.ladder.seconds for r in rows)
    below = [r.page for r in rows if r.stage_score < r.ladder_score]
    low = [r.page for r in rows if r.stage_score < GOAL_EVERY]
    return [
        f"score  stage: min {min(stage_scores):.1%} median {statistics.median(stage_scores):.1%}"
        f"   ladder: min {min(ladder_scores):.1%} median {statistics.median(ladder_scores):.1%}",
        f"goals  every page >= {GOAL_EVERY:.0%}: {'yes' if not low else 'no: ' + ', '.join(low)}"
        f"; median >= {GOAL_MEDIAN:.0%}: "
        f"{'yes' if statistics.median(stage_scores) >= GOAL_MEDIAN else 'no'}"
        f"; never below the ladder: {'yes' if not below else 'no: ' + ', '.join(below)}",
        f"time   median per page: ladder {ladder_time * 1000:.1f} ms  stage "
        f"{stage_time * 1000:.1f} ms  ratio {stage_time / ladder_time:.2f}x",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per page (best kept)")
    parser.add_argument("--only", default="", help="only pages whose name contains this")
    parser.add_argument("--formats", default="", help="one route's media types (default: both)")
    parser.add_argument("--save", type=Path, default=None, help="write sources and outputs here")
    parser.add_argument("--lone-image", choices=("slot", "turn"), default="slot")
    args = parser.parse_args(argv)
    routes = ROUTES if not args.formats else (Route(args.formats, tuple(args.formats.split(","))),)
    native = NativeSettings(lone_image=args.lone_image)
    targets = [ImageTarget.create(r.formats, native, None, None) for r in routes]
    print(
        f"routes: {'; '.join(', '.join(t.formats) for t in targets)}; budget "
        f"{targets[0].budget_base64} base64 bytes a slot, lone image: {args.lone_image} "
        f"({targets[0].turn_budget_base64 or targets[0].budget_base64}); ceiling "
        f"{targets[0].max_edge_px} px; "
        f"best of {args.repeats} run(s) per page",
        flush=True,
    )
    rows: dict[str, list[Row]] = {route.name: [] for route in routes}
    for page in busy_pages():
        if args.only not in page.name:
            continue
        known = reference(page, targets[0], args.repeats)
        for route, target in zip(routes, targets, strict=True):
            row = measure(page, target, native, args.repeats, known)
            rows[route.name].append(row)
            print(
                f"  {row.page:28} {route.name:13} stage {row.stage.width}x{row.stage.height} "
                f"{row.stage.label:9} {row.stage_score:5.0%} | ladder "
                f"{row.ladder.width}x{row.ladder.height} {row.ladder_score:5.0%} | ceiling "
                f"{row.ceiling_score:5.0%}",
                flush=True,
            )
            _save(args.save, page, row, route)
    for route in routes:
        print("\n".join(["", f"{route.name}:", *table(rows[route.name]), ""]))
        print("\n".join(summary(rows[route.name])))
    return 0


def _save(directory: Path | None, page: BusyPage, row: Row, route: Route) -> None:
    if directory is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    stem = page.name.split()[0]
    page.image.save(directory / f"{stem}.png")
    (directory / f"{stem}.{route.name.replace(' ', '-')}.stage").write_bytes(row.stage.data)
    (directory / f"{stem}.ladder.jpg").write_bytes(row.ladder.data)


if __name__ == "__main__":
    raise SystemExit(main())
