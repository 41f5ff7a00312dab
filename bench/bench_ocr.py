"""Local OCR on screenshot sequences with known text: full reads against incremental ones.

For every screenshot of every sequence (`_sequences.py`: a terminal gaining lines, a form
being filled, a page scrolling, an unchanged screen; 1280x720 to 2560x1440) the same run
measures a full OCR read and the incremental read of the text lane (`describe_screen`, the
previous screenshots of the sequence remembered), with their character error rates against
the ground truth, and Tesseract's full read of the same image when it is installed. The
baseline of each incremental time is the full read of the same screenshot in the same run.

    python bench/bench_ocr.py [--steps 4] [--sizes 1280x720,1920x1080,2560x1440]
    python bench/bench_ocr.py --tune   # threads, detection side and batch, one at a time
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ocr_measures import (
    Errors,
    changed_share,
    errors,
    order_agreement,
    tesseract_read,
    tesseract_version,
    truth_in_order,
)
from _sequences import KINDS, SIZES, Sequence, Shot, corpus

from visiongate.adapters.vision import LocalOCRBackend, OcrSettings, ScreenMemory
from visiongate.adapters.vision._layout import TextLine, arrange_lines, boxes_from_ocr

SMALL_CHANGE = 0.10
"""The issue's goal applies to screenshots whose change covers at most this share."""


@dataclass(frozen=True)
class Row:
    """One screenshot of one sequence, read three ways."""

    kind: str
    size: tuple[int, int]
    step: int
    changed: float
    full_ms: float
    full: Errors
    incremental_ms: float
    incremental: Errors
    swapped: tuple[int, int]
    """Pairs of lines the incremental read orders otherwise than the full read, of all."""
    reading: str
    tesseract_ms: float | None
    tesseract: Errors | None

    @property
    def ratio(self) -> float:
        return self.incremental_ms / self.full_ms


class Reader:
    """Full and Tesseract reads, memoised by pixels: an unchanged screen is read once."""

    def __init__(self, backend: LocalOCRBackend, tesseract: bool) -> None:
        self.backend = backend
        self.tesseract = tesseract
        self._full: dict[str, Read] = {}
        self._tess: dict[str, tuple[list[TextLine], float]] = {}

    def full(self, shot: Shot) -> Read:
        key = _pixel_key(shot)
        if key not in self._full:
            self._full[key] = read_screen(self.backend, shot, ScreenMemory(), "full")
        return self._full[key]

    def other(self, shot: Shot) -> tuple[list[TextLine], float] | None:
        if not self.tesseract:
            return None
        key = _pixel_key(shot)
        if key not in self._tess:
            self._tess[key] = tesseract_read(shot.png, shot.size)
        return self._tess[key]


def _pixel_key(shot: Shot) -> str:
    with Image.open(io.BytesIO(shot.png)) as image:
        return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


@dataclass(frozen=True)
class Read:
    lines: list[TextLine]
    ms: float
    mode: str
    cpu_ms: float
    """CPU time of this process (all threads): steadier than wall time on a shared machine,
    though onnxruntime's threads count their spinning too."""


def read_screen(backend: LocalOCRBackend, shot: Shot, memory: ScreenMemory, stream: str) -> Read:
    """One screenshot read through the text lane's path: its lines, with their places.

    With a fresh memory this is a full read.
    """
    started, started_cpu = time.perf_counter(), time.process_time()
    description = backend.describe_screen(shot.png, "image/png", memory=memory, stream=stream)
    elapsed = (time.perf_counter() - started) * 1000
    cpu = (time.process_time() - started_cpu) * 1000
    lines = list(memory.recent(stream)[0].lines)
    return Read(lines, elapsed, description.reading or "?", cpu)


def _cer(lines: list[TextLine], shot: Shot) -> Errors:
    """Errors of `lines` against the truth, put in their own reading order."""
    return errors(_texts(lines), truth_in_order(lines, shot.truth))


def _same_order(swapped: tuple[int, int]) -> float:
    return 1 - swapped[0] / max(1, swapped[1])


def _texts(lines: list[TextLine]) -> list[str]:
    return [line.text for line in lines]


def run_sequence(sequence: Sequence, reader: Reader) -> list[Row]:
    memory = ScreenMemory()
    rows = []
    previous: bytes | None = None
    for step, shot in enumerate(sequence.shots):
        full = reader.full(shot)
        incremental = read_screen(reader.backend, shot, memory, sequence.kind)
        other = reader.other(shot)
        rows.append(
            Row(
                kind=sequence.kind,
                size=sequence.size,
                step=step,
                changed=changed_share(shot.png, previous),
                full_ms=full.ms,
                full=_cer(full.lines, shot),
                incremental_ms=incremental.ms,
                incremental=_cer(incremental.lines, shot),
                swapped=order_agreement(incremental.lines, full.lines),
                reading=incremental.mode,
                tesseract_ms=other[1] if other else None,
                tesseract=_cer(other[0], shot) if other else None,
            )
        )
        previous = shot.png
    return rows


def print_rows(rows: list[Row]) -> None:
    print(
        f"{'sequence':<20} {'step':>4} {'changed':>8} {'full ms':>8} {'CER':>6} "
        f"{'incr ms':>8} {'CER':>6} {'order':>7} {'read as':<12} {'incr/full':>9} "
        f"{'tess ms':>8} {'CER':>6}"
    )
    for row in rows:
        tess = (
            f"{row.tesseract_ms:>8.0f} {100 * row.tesseract.cer:>5.2f}%"
            if row.tesseract and row.tesseract_ms is not None
            else f"{'-':>8} {'-':>6}"
        )
        print(
            f"{row.kind + ' ' + _size(row.size):<20} {row.step:>4} {100 * row.changed:>7.1f}% "
            f"{row.full_ms:>8.0f} {100 * row.full.cer:>5.2f}% {row.incremental_ms:>8.0f} "
            f"{100 * row.incremental.cer:>5.2f}% {100 * _same_order(row.swapped):>6.1f}% "
            f"{row.reading:<12} {row.ratio:>9.3f} {tess}"
        )


def print_summary(rows: list[Row]) -> None:
    later = [row for row in rows if row.step > 0]
    print("\nper sequence (screenshots after the first): CER against the truth")
    by_sequence: dict[str, list[Row]] = defaultdict(list)
    for row in later:
        by_sequence[f"{row.kind} {_size(row.size)}"].append(row)
    worst = 0.0
    for name, group in by_sequence.items():
        full = sum((row.full for row in group), Errors(0, 0))
        incremental = sum((row.incremental for row in group), Errors(0, 0))
        swapped = (sum(row.swapped[0] for row in group), sum(row.swapped[1] for row in group))
        delta = 100 * (incremental.cer - full.cer)
        worst = max(worst, delta)
        print(
            f"  {name:<20} full {100 * full.cer:5.2f}%  incremental {100 * incremental.cer:5.2f}%"
            f"  difference {delta:+.2f} points; line pairs in the full read's order: "
            f"{100 * _same_order(swapped):.1f}%"
        )
    print(f"  largest difference: {worst:+.2f} points (goal: at most +0.50)")
    print("\nper kind (screenshots after the first): incremental / full time")
    for kind in KINDS:
        group = [row for row in later if row.kind == kind]
        if group:
            ratios = [row.ratio for row in group]
            print(
                f"  {kind:<10} median {statistics.median(ratios):.3f}  max {max(ratios):.3f}  "
                f"median incremental {statistics.median(r.incremental_ms for r in group):.0f} ms "
                f"over {len(group)} screenshots"
            )
    small = [row for row in later if row.kind != "unchanged" and row.changed <= SMALL_CHANGE]
    if small:
        median = statistics.median(row.ratio for row in small)
        print(
            f"\nchange <= {SMALL_CHANGE:.0%} of the screen ({len(small)} screenshots): median "
            f"incremental/full {median:.3f} (goal: at most 0.25)"
        )
    same = [row.incremental_ms for row in later if row.kind == "unchanged"]
    if same:
        print(
            f"unchanged screenshots ({len(same)}): median {statistics.median(same):.1f} ms, "
            f"max {max(same):.1f} ms (goal: at most 50 ms)"
        )
    _print_engines(rows)


def _print_engines(rows: list[Row]) -> None:
    # An unchanged screen is one screenshot, however many times it is taken.
    distinct = {
        (_size(row.size), row.kind, row.step): row
        for row in rows
        if row.kind != "unchanged" or row.step == 0
    }
    rapid = sum((row.full for row in distinct.values()), Errors(0, 0))
    rapid_ms = statistics.median(row.full_ms for row in distinct.values())
    print(f"\nfull reads of {len(distinct)} distinct screenshots:")
    print(f"  local OCR (rapidocr)  median {rapid_ms:6.0f} ms  CER {100 * rapid.cer:.2f}%")
    tess = [row for row in distinct.values() if row.tesseract is not None]
    if tess:
        errors_sum = sum((row.tesseract for row in tess if row.tesseract), Errors(0, 0))
        median = statistics.median(row.tesseract_ms or 0.0 for row in tess)
        print(f"  tesseract             median {median:6.0f} ms  CER {100 * errors_sum.cer:.2f}%")
        ratio = statistics.median((row.tesseract_ms or 0.0) / row.full_ms for row in tess)
        print(f"  tesseract / local OCR time, median per screenshot: {ratio:.2f}x")


def tune(runs: int) -> None:
    """Full-read time and CER for each knob varied alone from the defaults, and for RapidOCR
    as shipped (its own pipeline and settings, as local OCR ran before issue 17).

    The readers take turns on each screenshot, so a change in the machine's load during
    the run falls on all of them alike.
    """
    shots = [seq.shots[0] for seq in corpus(((1920, 1080),), 1, ("terminal", "form", "scroll"))]
    shots.append(next(corpus(((2560, 1440),), 1, ("scroll",))).shots[0])
    base = OcrSettings()
    variants = [("defaults", base)]
    variants += [(f"threads={n}", replace(base, threads=n)) for n in (1, 2) if n != base.threads]
    variants += [
        (f"det_max_side={n}", replace(base, det_max_side=n))
        for n in (1280, 1600, 2560)
        if n != base.det_max_side
    ]
    variants += [
        (f"rec_batch={n}", replace(base, rec_batch=n)) for n in (1, 6, 12) if n != base.rec_batch
    ]
    print(
        f"tuning on {len(shots)} screenshots (1920x1080 terminal/form/scroll, 2560x1440 scroll), "
        f"median of {runs} runs each; defaults: {base}"
    )
    readers: list[tuple[str, Callable[[Shot], Read]]] = []
    for name, settings in variants:
        backend = LocalOCRBackend(settings)
        backend.describe(shots[0].png, "image/png")  # load the models outside the timing
        readers.append((name, partial(_full_read, backend)))
    readers.append(("rapidocr as shipped", _shipped_reader(shots[0])))
    reads: list[list[list[Read]]] = [[] for _ in readers]
    for shot in shots:
        turns: list[list[Read]] = [[] for _ in readers]
        for _ in range(runs):
            for index, (_, read) in enumerate(readers):
                turns[index].append(read(shot))
        for index, taken in enumerate(turns):
            reads[index].append(taken)
    for (name, _), per_shot in zip(readers, reads, strict=True):
        times = [statistics.median(read.ms for read in taken) for taken in per_shot]
        cpu = sum(statistics.median(read.cpu_ms for read in taken) for taken in per_shot)
        total = sum(
            (_cer(taken[-1].lines, shot) for taken, shot in zip(per_shot, shots, strict=True)),
            Errors(0, 0),
        )
        print(
            f"  {name:<20} wall {sum(times):7.0f} ms ({' '.join(f'{t:.0f}' for t in times)})  "
            f"cpu {cpu:7.0f} ms  CER {100 * total.cer:.2f}%"
        )


def _full_read(backend: LocalOCRBackend, shot: Shot) -> Read:
    return read_screen(backend, shot, ScreenMemory(), "tune")


def _shipped_reader(warm_up: Shot) -> Callable[[Shot], Read]:
    """RapidOCR's own `__call__` with its shipped settings (no angle classifier, as local
    OCR has always run it), the lines arranged by the same layout code."""
    from rapidocr import RapidOCR

    engine = RapidOCR(params={"Global.use_cls": False, "Global.log_level": "error"})

    def read(shot: Shot) -> Read:
        started, started_cpu = time.perf_counter(), time.process_time()
        with Image.open(io.BytesIO(shot.png)) as image:
            bgr = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])
        found = engine(bgr)
        boxes = [] if found.boxes is None else found.boxes
        result = [list(row) for row in zip(boxes, found.txts or (), found.scores, strict=False)]
        lines = arrange_lines(boxes_from_ocr(result), *shot.size)
        elapsed = (time.perf_counter() - started) * 1000
        return Read(lines, elapsed, "full", (time.process_time() - started_cpu) * 1000)

    read(warm_up)
    return read


def _size(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="screenshots per sequence")
    parser.add_argument("--sizes", default=",".join(_size(size) for size in SIZES))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--no-tesseract", action="store_true")
    parser.add_argument("--tune", action="store_true", help="measure the engine's knobs")
    parser.add_argument("--runs", type=int, default=2, help="runs per screenshot when tuning")
    args = parser.parse_args()
    print(_load())
    if args.tune:
        tune(args.runs)
        print(_load())
        return
    sizes = tuple(tuple(int(n) for n in size.split("x")) for size in args.sizes.split(","))
    version = None if args.no_tesseract else tesseract_version()
    print(f"local OCR settings: {OcrSettings()}; other engine: {version or 'none'}")
    backend = LocalOCRBackend()
    started = time.perf_counter()
    backend.describe(next(corpus(((1280, 720),), 1, ("form",))).shots[0].png, "image/png")
    print(f"first call (loads the models): {(time.perf_counter() - started) * 1000:.0f} ms\n")
    reader = Reader(backend, tesseract=version is not None)
    rows: list[Row] = []
    for sequence in corpus(sizes, args.steps, tuple(args.kinds.split(","))):  # type: ignore[arg-type]
        rows += run_sequence(sequence, reader)
    print_rows(rows)
    print_summary(rows)
    print(f"\n{_load()}")


if __name__ == "__main__":
    main()
