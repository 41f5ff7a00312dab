"""The HTML audit report over a fleet's trace of 1,000,000 decisions, against the summary alone.

    python bench/bench_audit_report.py [--records N] [--folder DIR] [--rounds N]

Uses the trace of `bench_audit.py` (generated once, then reused), and runs in child processes,
`--rounds` times each (3) in rounds, medians printed:

- baseline: `visiongate audit TRACE --format json` (the aggregate and its JSON summary);
- report: the same command with `--html report.html` (the aggregate, the JSON summary and the
  page).

The report is drawn from the aggregate alone, so its cost is what drawing adds on top of
aggregating: the ratio should be close to 1 and the page's size independent of the number
of records. Also printed: the page's size, and how long drawing takes in this process from
an aggregate already made (rendering only).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_audit import Run, measure, trace_file


def _rounds(jobs: list[tuple[str, list[str]]], rounds: int) -> dict[str, list[Run]]:
    runs: dict[str, list[Run]] = {name: [] for name, _ in jobs}
    for number in range(1, rounds + 1):
        for name, command in jobs:
            run = measure(name, command)
            if run.code not in (0, 1):
                raise SystemExit(f"{name} failed with exit code {run.code}")
            runs[name].append(run)
            print(
                f"  round {number}: {name}: {run.seconds:.2f} s, {run.peak_mb:.0f} MB", flush=True
            )
    return runs


def _render_only(path: Path) -> tuple[float, float, int]:
    """Aggregate once in this process, then time drawing the page from it (median of 5)."""
    from visiongate.engine.tooling.audit._aggregate import Query
    from visiongate.engine.tooling.audit._inputs import expand
    from visiongate.engine.tooling.audit._parallel import aggregate_in_parallel
    from visiongate.engine.tooling.pictures import render_audit_report

    start = time.perf_counter()
    result = aggregate_in_parallel(expand([str(path)]), Query(), None, 2)
    aggregated = time.perf_counter() - start
    times, size = [], 0
    for _ in range(5):
        start = time.perf_counter()
        size = len(render_audit_report(result).encode())
        times.append(time.perf_counter() - start)
    return aggregated, statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "vg-bench")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    path = trace_file(args.folder, args.records)
    report = args.folder / "report.html"
    audit = [sys.executable, "-m", "visiongate", "audit", str(path), "--format", "json"]
    jobs = [("summary (json)", audit), ("summary + --html report", [*audit, "--html", str(report)])]
    print(f"{args.records:,} records, {path.stat().st_size / 1e9:.2f} GB; {args.rounds} rounds")
    runs = _rounds(jobs, args.rounds)
    base = statistics.median(run.seconds for run in runs["summary (json)"])
    for name, measured in runs.items():
        seconds = statistics.median(run.seconds for run in measured)
        peak = statistics.median(run.peak_mb for run in measured)
        print(f"{name:28} {seconds:7.2f} s  {peak:6.0f} MB  {seconds / base:5.2f}x the summary")
    aggregated, drawn, size = _render_only(path)
    print(f"page: {report.stat().st_size / 1024:.0f} KiB on disk")
    print(
        f"in process: aggregate {aggregated:.2f} s, then draw {drawn * 1000:.0f} ms "
        f"({size / 1024:.0f} KiB), {drawn / aggregated:.3f}x the aggregate"
    )


if __name__ == "__main__":
    main()
