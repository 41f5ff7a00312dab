"""Cold start of the command line, measured against `python3 -c "import yaml"` in the same run.

    python bench/bench_cli.py [--runs N] [--cold] [--in-place] [--only NAME ...]

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

By default every command and both baselines run with the interpreter of a throwaway venv
holding the checkout installed from its wheel (`_installed.py`): in an editable install the
finder's `.pth` file costs every interpreter start about 10 ms of CPU, which inflates the
baselines and flatters every ratio (issue 37's rows read 6.78x and 3.16x there, 12.9x and
5.9x installed). `--in-place` runs with this interpreter instead, as before. Each row prints
the median wall time and the median CPU time of the child (user + system, from `os.wait4`),
and the ratios of both to `python -c pass`'s. `--only NAME` (repeatable) runs those rows.
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

from _installed import installed_python

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ["-c", "import yaml"]
BARE = ["-c", "pass"]
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
    # Issue 37's rows: its ratios are against `python -c pass` (the last columns).
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
GOALS = {"--help": 150, "decide --facts": 200, "lint default.yaml": 200}
"""Goals in milliseconds on an idle 2-core machine (issue 14)."""
RATIO_GOALS = {
    "decide --provider anthropic --model claude-sonnet-4-5": 8,
    "mcp --help": 4,
    "demo --help": 4,
}
"""Goals as multiples of `python -c pass` (issue 37)."""


def _once(command: list[str], env: dict[str, str], cache: Path | None) -> tuple[float, float]:
    """The wall time and the child's CPU time (user + system) of one run, in seconds."""
    if cache is not None:
        shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = 0  # reaped above: keep Popen from waiting for it again
    return wall, usage.ru_utime + usage.ru_stime


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


def measure(
    python: Path, names: list[str], runs: int, cold: bool
) -> dict[str, list[tuple[float, float]]]:
    home = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(home), "XDG_STATE_HOME": str(home)}
    env.pop("VIRTUAL_ENV", None)
    # A shell that sets it would make a command compile every module it did not find
    # compiled, at every run: a user's installation has its .pyc files.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    refreshed = {**env, "VISIONGATE_FACTS_CACHE": str(_refreshed_catalog(home))}
    env["VISIONGATE_FACTS_CACHE"] = str(home / "no-refresh")
    envs = {name: refreshed if name.endswith("(refreshed)") else env for name in names}
    cache = home / "visiongate" if cold else None
    commands = {name: [str(python), "-m", "visiongate", *COMMANDS[name]] for name in names}
    baselines = {"baseline": [str(python), *BASELINE], "bare": [str(python), *BARE]}
    for name, command in commands.items():  # warm-up: the page cache, and the policy cache
        _once(command, envs[name], None)
    for command in baselines.values():
        _once(command, env, None)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in (*baselines, *commands)}
    for _ in range(runs):
        for name, command in baselines.items():
            times[name].append(_once(command, env, None))
        for name, command in commands.items():
            times[name].append(_once(command, envs[name], cache))
    shutil.rmtree(home, ignore_errors=True)
    return times


def _medians(values: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def _print(times: dict[str, list[tuple[float, float]]], runs: int, cold: bool, where: str) -> None:
    base, _ = _medians(times["baseline"])
    bare, bare_cpu = _medians(times["bare"])
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    state = "cold" if cold else "warm"
    print(f"visiongate CLI cold start, median of {runs} runs, policy cache {state}, {where}")
    print(f"load average {load} on {os.cpu_count()} cores")
    print(
        f"{'command':<66}{'wall':>9}{'cpu':>9}{'vs yaml':>9}{'vs pass':>9}{'cpu vs':>9}"
        "  goal (idle machine)"
    )
    print(f"{'':<66}{'':>9}{'':>9}{'(wall)':>9}{'(wall)':>9}{'pass':>9}")
    for name, values in times.items():
        wall, cpu = _medians(values)
        label = {"baseline": 'python -c "import yaml"', "bare": 'python -c "pass"'}.get(
            name, f"visiongate {name}"
        )
        goal = f"  <= {GOALS[name]} ms" if name in GOALS else ""
        goal = f"  <= {RATIO_GOALS[name]}x python -c pass" if name in RATIO_GOALS else goal
        row = f"{label:<66}{wall * 1000:>7.1f}ms{cpu * 1000:>7.1f}ms"
        print(f"{row}{wall / base:>8.2f}x{wall / bare:>8.2f}x{cpu / bare_cpu:>8.2f}x{goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (at least 10)")
    parser.add_argument("--cold", action="store_true", help="empty the policy cache every run")
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="run with this interpreter (an editable install inflates the baselines)",
    )
    parser.add_argument(
        "--only", action="append", choices=COMMANDS, metavar="NAME", help="this row only"
    )
    args = parser.parse_args()
    names = args.only or list(COMMANDS)
    if args.in_place:
        python, work, where = Path(sys.executable), None, f"in place ({sys.executable})"
    else:
        python, work = installed_python(ROOT)
        where = "installed from the wheel in a throwaway venv"
    try:
        times = measure(python, names, max(10, args.runs), args.cold)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    _print(times, max(10, args.runs), args.cold, where)


if __name__ == "__main__":
    main()
