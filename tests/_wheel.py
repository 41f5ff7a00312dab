"""One wheel of this checkout per test run, shared by the tests that install the project.

`pip install .` builds the project anew each time (an isolated build environment, the C
scanner compiled), which cost the installing tests about 12 s of CPU each. The wheel is built
once, by whichever xdist worker asks first, under a lock in the run's own folder (the folder
every worker's temporary folders sit in), and the others install the same file. Outside xdist
the folder is the session's own, so a wheel never outlives the run that built it.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def project_wheel(factory: pytest.TempPathFactory) -> Path:
    """The path of this checkout's wheel, built on first use in this test run."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "visiongate-wheel"
    with (shared / "visiongate-wheel.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        built = sorted(folder.glob("visiongate-*.whl"))
        if not built:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder), "."],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            built = sorted(folder.glob("visiongate-*.whl"))
        assert len(built) == 1, built
        return built[0]
