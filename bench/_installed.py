"""A throwaway environment holding the checkout as a user installs it: from its wheel.

An editable install (`pip install -e`) puts a `.pth` file in site-packages whose finder
imports `pathlib`, `urllib.parse` and `importlib.util` at every interpreter start, about
10 ms of CPU: a baseline of `python -c pass` run there is inflated, and every ratio against it
flattered. Here the checkout is built into a wheel (in a copy, so a stale `build/` cannot
leak into it), the wheel is unpacked into a new venv made `--without-pip`, and the
dependencies are linked from the running interpreter's site-packages, every `.pth` file and
the editable install's own files left out: no network, a few seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

__all__ = ["installed_python"]

_NOT_BUILT = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*_cache", "tests", "bench"
)


def _wheel(root: Path, work: Path) -> Path:
    source = work / "source"
    shutil.copytree(root, source, ignore=_NOT_BUILT, symlinks=True)
    out = work / "wheel"
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), "."]
    subprocess.run(command, cwd=source, check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(source)
    return next(out.glob("visiongate-*.whl"))


def _ours(name: str) -> bool:
    """The editable install's files, and what the wheel brings itself."""
    return name.startswith(("__editable__", "visiongate")) or name.endswith(".pth")


def _link_dependencies(site: Path) -> None:
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in sorted(here.iterdir()):
        if not _ours(entry.name) and entry.name != "__pycache__":
            (site / entry.name).symlink_to(entry)


def installed_python(root: Path, work: Path | None = None) -> tuple[Path, Path]:
    """The interpreter of a new venv with `root` installed from its wheel, and the folder
    to remove afterwards."""
    work = Path(tempfile.mkdtemp(prefix="bench-installed-")) if work is None else work
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    site = Path(purelib)
    with zipfile.ZipFile(_wheel(root, work)) as wheel:
        wheel.extractall(site)
    _link_dependencies(site)
    # Compiled once now, as pip does at install: no run pays for writing the .pyc files.
    subprocess.run(
        [str(python), "-m", "compileall", "-q", str(site / "visiongate")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return python, work
