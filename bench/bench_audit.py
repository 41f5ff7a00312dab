"""`visiongate audit` over a fleet's trace of 1,000,000 decisions, against baselines.

    python bench/bench_audit.py [--records N] [--folder DIR] [--rounds N] [--no-duckdb]

Generates (once, then reuses) a realistic trace (`_audit_trace.py`: real records of real
gates and routers, five policies, thirteen models, four sources, 64 processes, 30 days,
malformed lines mixed in), then runs each job in a child process and prints its wall time
and peak RSS (the child's own `ru_maxrss`), next to two baselines over the same file:
`wc -l` (reading the bytes) and a plain `json.loads` loop (decoding every line, nothing
kept). Every job runs `--rounds` times (3), in rounds, and the median is printed: on a
machine shared with other work, one run says little. Jobs:

- summary: `visiongate audit TRACE --format json` (reading with one process per core, the
  default), and with `--jobs 1`;
- filtered group-by: `--lane native --provider anthropic,openai --group-by model,day`;
- `--decision ID` for a decision 60% of the way into the file;
- the engine not chosen, for the record: DuckDB (when installed) reading the JSON lines
  itself, the same summary counts as one GROUP BY, and the same id look-up.

Goals on a 2-core machine: summary <= 15 s, peak RSS <= 300 MB, `--decision` <= 5 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

GENERATOR_VERSION = 4
"""As in `_audit_trace.py` (not imported: it loads the whole package into this process)."""

JSON_LOOP = """
import json, sys
with open(sys.argv[1], "rb") as stream:
    for line in stream:
        try:
            json.loads(line)
        except (ValueError, RecursionError):
            pass
"""

DUCKDB_SUMMARY = """
import duckdb, sys
columns = {
    "decision_id": "VARCHAR", "timestamp": "TIMESTAMPTZ", "lane": "VARCHAR", "rule": "VARCHAR",
    "source": "VARCHAR", "provider": "VARCHAR", "model": "VARCHAR",
    "facts": "STRUCT(mode VARCHAR, catalog VARCHAR, aux VARCHAR, path VARCHAR)",
    "policy": "STRUCT(name VARCHAR, version VARCHAR, sha256 VARCHAR, path VARCHAR, "
    "bundled VARCHAR)",
}
connection = duckdb.connect()
connection.execute("SET threads = 2")
trace = f"read_json(?, format='newline_delimited', ignore_errors=true, columns={columns!r})"
if sys.argv[2] == "summary":
    rows = connection.execute(
        f"SELECT CAST(timestamp AS DATE), provider, model, lane, rule, facts, source, policy, "
        f"count(*) FROM {trace} GROUP BY ALL", [sys.argv[1]]
    ).fetchall()
else:
    rows = connection.execute(
        f"SELECT * FROM {trace} WHERE decision_id = ?", [sys.argv[1], sys.argv[2]]
    ).fetchall()
print(len(rows))
"""


@dataclass(frozen=True)
class Run:
    name: str
    seconds: float
    peak_mb: float
    code: int


def measure(name: str, command: list[str]) -> Run:
    """Wall time and peak RSS of the job's whole process tree, output discarded.

    The peak is the larger of two readings: GNU time's `%M` (the exact `ru_maxrss` of the
    largest process; a job started by this Python process directly would count this
    process's memory too, since Linux keeps the peak of the image before `exec`), and the sum
    of the proportional set size (`Pss`: pages shared by forked workers counted once) over
    the job and its worker processes, sampled every 20 ms."""
    wrapped = ["/usr/bin/time", "-f", "%M", *command] if Path("/usr/bin/time").exists() else command
    start = time.perf_counter()
    child = subprocess.Popen(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak_kb = 0
    while child.poll() is None:
        peak_kb = max(peak_kb, _tree_rss_kb(child.pid))
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    assert child.stderr is not None
    lines = child.stderr.read().strip().splitlines()
    child.stderr.close()
    if wrapped is not command and lines and lines[-1].strip().isdigit():
        peak_kb = max(peak_kb, int(lines[-1]))
    return Run(name, seconds, peak_kb / 1024, child.returncode)


def _tree_rss_kb(root: int) -> int:
    """The proportional resident memory of a process and all its descendants, in KiB."""
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/smaps_rollup") as rollup:
                total += sum(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                pending += [int(item) for item in children.read().split()]
        except (OSError, ValueError):
            continue  # the process ended between two reads
    return total


def trace_file(folder: Path, records: int) -> Path:
    """The cached trace, generated in a child process (this one stays small)."""
    path = folder / f"trace-v{GENERATOR_VERSION}-{records}.jsonl"
    if not path.exists():
        print(f"generating {records:,} records into {path} ...", flush=True)
        start = time.perf_counter()
        partial = path.with_suffix(".partial")
        generator = Path(__file__).with_name("_audit_trace.py")
        subprocess.run([sys.executable, str(generator), str(partial), str(records)], check=True)
        partial.rename(path)
        print(f"  done in {time.perf_counter() - start:.0f} s", flush=True)
    return path


def decision_in_middle(path: Path) -> str:
    """The id of the first record past 60% of the file."""
    with path.open("rb") as stream:
        stream.seek(path.stat().st_size * 6 // 10)
        stream.readline()
        while True:
            try:
                return str(json.loads(stream.readline())["decision_id"])
            except (ValueError, KeyError, RecursionError):
                continue


def jobs(path: Path, decision: str, duckdb: bool) -> list[tuple[str, list[str]]]:
    audit = [sys.executable, "-m", "visiongate", "audit", str(path)]
    found = [
        ("baseline: wc -l", ["wc", "-l", str(path)]),
        ("baseline: json.loads loop", [sys.executable, "-c", JSON_LOOP, str(path)]),
        ("audit summary", [*audit, "--format", "json"]),
        ("audit summary --jobs 1", [*audit, "--format", "json", "--jobs", "1"]),
        (
            "audit filtered group-by",
            [
                *audit,
                "--lane",
                "native",
                "--provider",
                "anthropic,openai",
                "--group-by",
                "model,day",
            ],
        ),
        ("audit --decision ID", [*audit, "--decision", decision]),
    ]
    if duckdb:
        script = [sys.executable, "-c", DUCKDB_SUMMARY, str(path)]
        found += [
            ("duckdb summary (GROUP BY)", [*script, "summary"]),
            ("duckdb decision_id = ID", [*script, decision]),
        ]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "vg-bench")
    parser.add_argument("--no-duckdb", action="store_true")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="run every job this many times, in rounds, and print the median time (the "
        "machine is shared: rounds spread other load evenly over the jobs)",
    )
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    path = trace_file(args.folder, args.records)
    decision = decision_in_middle(path)
    size = path.stat().st_size
    print(f"trace: {args.records:,} records, {size / 1e6:,.0f} MB, {os.cpu_count()} cores")
    with_duckdb = not args.no_duckdb and _has_duckdb()
    planned = jobs(path, decision, with_duckdb)
    rounds = [[measure(name, command) for name, command in planned] for _ in range(args.rounds)]
    runs = [_median(list(same)) for same in zip(*rounds, strict=True)]
    baseline = next(run for run in runs if run.name.startswith("baseline: json"))
    print(f"median of {args.rounds} round(s); peak RSS: the largest of the rounds")
    print(f"{'job':32} {'wall s':>8} {'peak RSS MB':>12} {'x json.loads':>13} {'exit':>5}")
    for run in runs:
        ratio = run.seconds / baseline.seconds
        print(f"{run.name:32} {run.seconds:8.2f} {run.peak_mb:12.0f} {ratio:13.2f} {run.code:5d}")
    if not with_duckdb:
        print("duckdb: not installed (pip install duckdb) or --no-duckdb; not measured")


def _median(runs: list[Run]) -> Run:
    seconds = statistics.median(run.seconds for run in runs)
    return Run(runs[0].name, seconds, max(run.peak_mb for run in runs), runs[-1].code)


def _has_duckdb() -> bool:
    return importlib.util.find_spec("duckdb") is not None


if __name__ == "__main__":
    main()
