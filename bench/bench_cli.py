"""Cold start of the command line, measured against `python3 -c "import yaml"` in the same run.

    python bench/bench_cli.py [--runs N] [--cold]

Pre-commit hooks and CI start `visiongate` once per call, so what counts is the wall time of
a whole process. Each command runs N times (default 15, at least 10) as a subprocess with
its output discarded; the benchmark prints the median, the ratio to the baseline's median
(the baseline runs interleaved with the commands, so machine load hits both alike) and the
load average, since the figures are only comparable as ratios on a shared machine.

The policy cache lives in a private directory: one warm-up run fills it before the
measured runs (warm). `--cold` empties it before every run instead, which measures the
first call after a policy changed.

`decide --provider --model (refreshed)` runs with a refreshed catalog in the facts cache (a
copy of the bundled snapshot, dated after it, as `visiongate catalog update` stores one), so
the two `decide --provider --model` lines compare the bundled and the refreshed catalog.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "visiongate"]
BASELINE = [sys.executable, "-c", "import yaml"]
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "decide --facts": ["decide", "--facts", "mode=auto,catalog=vision,aux=unset,path=accepts"],
    "lint default.yaml": ["lint", "policies/default.yaml"],
    "explain": ["explain"],
    "decide --provider --model": ["decide", "--provider", "anthropic", "--model", "gpt-4o"],
    "decide --provider --model (refreshed)": [
        "decide",
        "--provider",
        "anthropic",
        "--model",
        "gpt-4o",
    ],
    "test default.test.yaml": ["test", "policies/default.test.yaml"],
    # Issue 37's rows: its ratios are against `python -c pass` (the last column).
    "decide --provider anthropic --model claude-sonnet-4-5": [
        "decide",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
    ],
    "mcp --help": ["mcp", "--help"],
    "demo --help": ["demo", "--help"],
}
BARE = [sys.executable, "-c", "pass"]
GOALS = {"--help": 150, "decide --facts": 200, "lint default.yaml": 200}
"""Goals in milliseconds on an idle 2-core machine (issue 14)."""
RATIO_GOALS = {
    "decide --provider anthropic --model claude-sonnet-4-5": 8,
    "mcp --help": 4,
    "demo --help": 4,
}
"""Goals as multiples of `python -c pass` (issue 37)."""


def _once(command: list[str], env: dict[str, str], cache: Path | None) -> float:
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _refreshed_catalog(home: Path) -> Path:
    """A facts cache holding a refreshed catalog: the bundled snapshot, fetched 'now'."""
    sys.path.insert(0, str(ROOT))
    from visiongate.engine.facts._catalog_snapshot import snapshot_text

    document = json.loads((ROOT / "policies" / "catalog" / "models-dev.json").read_text())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    document["_fetched"] = {"date": stamp, "url": "https://models.dev/api.json"}
    facts = home / "refreshed-facts"
    facts.mkdir(parents=True)
    (facts / "models-dev.json").write_text(snapshot_text(document), encoding="utf-8")
    return facts


def measure(runs: int, cold: bool) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(home), "XDG_STATE_HOME": str(home)}
    refreshed = {**env, "VISIONGATE_FACTS_CACHE": str(_refreshed_catalog(home))}
    env["VISIONGATE_FACTS_CACHE"] = str(home / "no-refresh")
    envs = {name: refreshed if name.endswith("(refreshed)") else env for name in COMMANDS}
    cache = home / "visiongate" if cold else None
    commands = {name: CLI + argv for name, argv in COMMANDS.items()}
    for name, command in commands.items():  # warm-up: the page cache, and the policy cache
        _once(command, envs[name], None)
    times: dict[str, list[float]] = {name: [] for name in ("baseline", "bare", *commands)}
    for _ in range(runs):
        times["baseline"].append(_once(BASELINE, env, None))
        times["bare"].append(_once(BARE, env, None))
        for name, command in commands.items():
            times[name].append(_once(command, envs[name], cache))
    shutil.rmtree(home, ignore_errors=True)
    _print(times, runs, cold)


def _print(times: dict[str, list[float]], runs: int, cold: bool) -> None:
    base = statistics.median(times["baseline"])
    bare = statistics.median(times.pop("bare"))
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    state = "cold" if cold else "warm"
    print(f"visiongate CLI cold start, median of {runs} runs, policy cache {state}")
    print(f"load average {load} on {os.cpu_count()} cores")
    print(f"{'command':<56}{'median':>10}{'ratio':>9}{'vs pass':>9}  goal (idle machine)")
    label = 'python3 -c "import yaml"'
    print(f"{label:<56}{base * 1000:>8.1f}ms{1.0:>8.2f}x{base / bare:>8.2f}x")
    label = 'python3 -c "pass"'
    print(f"{label:<56}{bare * 1000:>8.1f}ms{bare / base:>8.2f}x{1.0:>8.2f}x")
    for name, values in times.items():
        if name == "baseline":
            continue
        median = statistics.median(values)
        goal = f"  <= {GOALS[name]} ms" if name in GOALS else ""
        goal = f"  <= {RATIO_GOALS[name]}x python -c pass" if name in RATIO_GOALS else goal
        row = f"{'visiongate ' + name:<56}{median * 1000:>8.1f}ms{median / base:>8.2f}x"
        print(f"{row}{median / bare:>8.2f}x{goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (at least 10)")
    parser.add_argument("--cold", action="store_true", help="empty the policy cache every run")
    args = parser.parse_args()
    measure(max(10, args.runs), args.cold)


if __name__ == "__main__":
    main()
