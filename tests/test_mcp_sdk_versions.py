"""The routing core installs and runs next to the 1.x MCP SDK, not only the 2.x one.

The main test environment has the 2.x SDK (the `mcp` extra). This test builds a second
virtual environment from the package registry with `mcp<2` (the generation LangChain's MCP
adapters still require) and this checkout, so pip itself shows the two install together; then
runs the core's tests that build SDK models only from wire JSON, and checks that the MCP
client, built on the 2.x API, says so in one line instead of failing deep in an import.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE_TESTS = (
    "tests/test_mcp_edge.py",
    "tests/test_turns.py",
    "tests/test_payloads.py",
    "tests/test_public_api.py",
)


def run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=cwd, check=False
    )


def test_core_runs_next_to_the_1x_sdk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv = tmp_path / "venv-mcp1"
    # Without a pip of its own: seeding one costs 7 s of CPU here, and this interpreter's pip
    # installs into the venv as well (`--python`).
    assert run([sys.executable, "-m", "venv", "--without-pip", str(venv)]).returncode == 0
    python, binaries = venv / "bin" / "python", venv / "bin"
    install = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            # No bytecode for the hundreds of modules installed: the core tests import few of
            # them, and this machine runs with PYTHONDONTWRITEBYTECODE anyway.
            "--no-compile",
            str(ROOT),
            "mcp>=1.10,<2",
            "pytest>=8",
            "pytest-xdist>=3.6,<4",
        ]
    )
    assert install.returncode == 0, install.stderr[-3000:]
    version = run([str(python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"])
    assert version.stdout.startswith("1."), version.stdout

    tests = run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS], ROOT)
    summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]

    target = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
    client = run(
        [str(binaries / "visiongate"), "mcp", "call", *target, "--tool", "t", "--", "true"]
    )
    assert client.returncode == 2
    assert "the mcp client needs the official `mcp` sdk 2.x" in client.stderr
    assert "pip install 'visiongate[mcp]'" in client.stderr
    decide = run([str(binaries / "visiongate"), "decide", *target])
    assert decide.returncode == 0 and "native" in decide.stdout
    with capsys.disabled():
        print(f"\n  core tests with mcp {version.stdout.strip()}: {summary}")
