"""CPU seconds per test, its children included, when `VISIONGATE_TEST_CPU=FILE` asks for it.

Wall clock on a shared machine says little; CPU is what the suite's speed goals are spent on
(CONTRIBUTING.md). `conftest.py` wraps each test (setup, call and teardown) in `measured`,
which appends one tab-separated line to FILE: the test's id, then the user and system CPU
seconds of the test process and of its children (`RUSAGE_CHILDREN`: only children already
waited for, so a module-scoped server is counted in the teardown of the module's last test),
then the wall seconds. Lines are appended whole (`O_APPEND`), so the xdist workers can share
the file.

`python tests/_cpu.py FILE` sums it per file, costliest first.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

VARIABLE = "VISIONGATE_TEST_CPU"


def _cpu() -> tuple[float, float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime, own.ru_stime, children.ru_utime, children.ru_stime


@contextmanager
def measured(nodeid: str) -> Iterator[None]:
    """Append the test's CPU and wall seconds to `$VISIONGATE_TEST_CPU` (if set)."""
    target = os.environ.get(VARIABLE)
    if not target:
        yield
        return
    before, started = _cpu(), time.perf_counter()
    try:
        yield
    finally:
        spent = [after - first for after, first in zip(_cpu(), before, strict=True)]
        wall = time.perf_counter() - started
        fields = [nodeid, *(f"{seconds:.3f}" for seconds in (*spent, wall))]
        line = ("\t".join(fields) + "\n").encode()
        descriptor = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)


def summary(path: Path) -> list[tuple[float, float, int, str]]:
    """(CPU seconds, wall seconds, tests, file) per test file, costliest first."""
    files: dict[str, tuple[float, float, int]] = {}
    for line in path.read_text().splitlines():
        nodeid, *numbers = line.split("\t")
        cpu, wall = sum(map(float, numbers[:4])), float(numbers[4])
        name = nodeid.split("::")[0]
        total, walls, count = files.get(name, (0.0, 0.0, 0))
        files[name] = (total + cpu, walls + wall, count + 1)
    rows = [(cpu, wall, count, name) for name, (cpu, wall, count) in files.items()]
    return sorted(rows, reverse=True)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head`: end quietly, as a filter does
    rows = summary(Path(sys.argv[1]))
    print(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  file")
    for cpu, wall, count, name in rows:
        print(f"{cpu:8.1f} {wall:8.1f} {count:6d}  {name}")
    print(f"{sum(r[0] for r in rows):8.1f} {sum(r[1] for r in rows):8.1f} "
          f"{sum(r[2] for r in rows):6d}  in all")  # fmt: skip
