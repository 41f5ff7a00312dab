"""The repository's habits hold: each written in one place and checked, so none goes stale.

CONTRIBUTING.md's map of `tests/` covers every test file; the pre-commit configuration runs
the hooks this repository publishes; the `test` extra refers to the other extras instead of
repeating them; every exception to `filterwarnings = error` says why; the lock that keeps a
group of tests (the browser's, the npm servers') to one worker at a time holds.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parent.parent
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

pytest_plugins = ["pytester"]


def contributing_map() -> dict[str, list[str]]:
    """Stage -> the file patterns of its row in CONTRIBUTING.md's table."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Where a new test goes", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("`"):
            rows[cells[0]] = re.findall(r"`([^`]+)`", cells[1])
    return rows


def test_every_test_file_has_exactly_one_place_in_contributing() -> None:
    patterns = {
        pattern: stage
        for stage, globs in contributing_map().items()
        for pattern in globs
        if pattern.startswith("test_")
    }
    assert len(patterns) > 20
    files = sorted(path.name for path in (ROOT / "tests").glob("test_*.py"))
    places = {name: [p for p in patterns if fnmatch.fnmatch(name, p)] for name in files}
    assert {name: found for name, found in places.items() if len(found) != 1} == {}
    # No row lists a pattern that matches nothing (a renamed file leaves no stale row).
    assert [p for p in patterns if not any(fnmatch.fnmatch(n, p) for n in files)] == []


def test_the_pre_commit_config_runs_the_published_hooks_on_this_repository() -> None:
    published = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    [local] = [repo for repo in config["repos"] if repo["repo"] == "local"]
    hooks = {hook["id"]: hook for hook in local["hooks"]}
    assert {"ruff", "ruff-format", "mypy"} <= set(hooks)
    for hook in published:
        mine = hooks[hook["id"]]
        assert mine["entry"] == f".venv/bin/{hook['entry']}", hook["id"]
        assert mine.get("pass_filenames", True) == hook.get("pass_filenames", True), hook["id"]
        assert mine.get("exclude") == hook.get("exclude"), hook["id"]
        assert mine["files"].startswith("^"), "only this repository's own policies"


def _names(requirements: list[str]) -> set[str]:
    return {
        re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower() for requirement in requirements
    }


def test_the_test_and_demo_extras_refer_to_the_others() -> None:
    extras: dict[str, list[str]] = PROJECT["project"]["optional-dependencies"]
    assert "visiongate[mcp,ocr,otel,gateway]" in extras["test"]
    assert "visiongate[mcp,ocr]" in extras["demo"]
    assert "visiongate[mcp]" in extras["gateway"]
    for name in ("mcp", "ocr", "otel", "gateway"):
        written = _names(extras[name]) - {"visiongate"}  # an extra may refer to another
        repeated = written & (_names(extras["test"]) | _names(extras["demo"]))
        assert repeated == set(), f"{sorted(repeated)} of [{name}] written out again"


def test_what_the_ocr_code_imports_is_declared() -> None:
    ocr = _names(PROJECT["project"]["optional-dependencies"]["ocr"])
    imported = {"numpy", "opencv-python-headless", "rapidocr", "onnxruntime"}
    assert imported <= ocr
    engine = (ROOT / "adapters" / "vision" / "_engine.py").read_text(encoding="utf-8")
    assert "import cv2" in engine and "import numpy" in engine


def test_every_warning_filter_is_an_error_or_a_named_commented_exception() -> None:
    filters: list[str] = PROJECT["tool"]["pytest"]["ini_options"]["filterwarnings"]
    assert filters[0] == "error"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split("filterwarnings = [", 1)[1].split("\n]", 1)[0].splitlines()
    for entry in filters[1:]:
        assert entry.startswith("ignore:") and entry.count(":") >= 2, entry  # a message, a class
        line = next(index for index, row in enumerate(block) if entry in row)
        above = [row.strip() for row in block[:line] if not row.strip().startswith('"ignore:')]
        assert above and above[-1].startswith("#"), f"say why: {entry}"


GROUP_MARK = '@pytest.mark.xdist_group("npm")'
GROUPED_MODULE = """
import os
import time

import pytest

{mark}
def test_hold() -> None:
    started = time.time()
    time.sleep(1.0)
    line = f"{{os.environ['PYTEST_XDIST_WORKER']}} {{started}} {{time.time()}}\\n"
    with open({log!r}, "a") as log:
        log.write(line)
"""

LOCK_CONFTEST = """
import importlib.util
import sys

sys.path.insert(0, {tests!r})
_spec = importlib.util.spec_from_file_location("suite_conftest", {conftest!r})
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
_one_group_at_a_time = _suite._one_group_at_a_time
"""


def _two_modules_on_two_workers(
    pytester: pytest.Pytester, mark: str
) -> list[tuple[str, float, float]]:
    """Run two modules of one sleeping test each on two workers, under the suite's own group
    lock fixture (`conftest._one_group_at_a_time`); each test's (worker, start, end)."""
    log = pytester.path / "held.log"
    tests = Path(__file__).parent
    pytester.makeconftest(
        LOCK_CONFTEST.format(tests=str(tests), conftest=str(tests / "conftest.py"))
    )
    for name in ("test_first", "test_second"):
        pytester.makepyfile(**{name: GROUPED_MODULE.format(mark=mark, log=str(log))})
    result = pytester.runpytest_subprocess(
        "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2)
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(worker, float(start), float(end)) for worker, start, end in rows]


@pytest.mark.slow
def test_two_modules_of_a_group_never_run_at_once_on_two_workers(
    pytester: pytest.Pytester,
) -> None:
    """The xdist group lock (`tests/conftest.py`): two modules of the `npm` group, one per
    worker, run one after the other (without the group they overlap: each sleeps a second and
    both workers start together)."""
    held = _two_modules_on_two_workers(pytester, GROUP_MARK)
    (worker_a, _, end_a), (worker_b, start_b, _) = sorted(held, key=lambda row: row[1])
    assert worker_a != worker_b and end_a <= start_b


def test_the_scheduler_hands_out_each_group_as_one_unit(request: pytest.FixtureRequest) -> None:
    """`_slow.GROUP_FILES`, which the suite's scheduler hands out a group at a time, names the
    files whose tests carry each group's marker, no more and no fewer (of those collected);
    every other file is its own unit, as under `--dist loadfile`."""
    from _slow import GROUP_FILES, scope_of

    items = request.session.items
    marked = {
        item.path.name: str(marker.args[0])
        for item in items
        for marker in item.iter_markers("xdist_group")
    }
    assert marked.items() <= GROUP_FILES.items()  # no marked file left out
    if not (request.config.option.keyword or request.config.option.markexpr):  # whole files
        collected = {item.path.name for item in items}
        assert marked == {name: group for name, group in GROUP_FILES.items() if name in collected}
    assert scope_of("tests/test_proxy_filesystem.py::test_x[a]") == "group npm"
    assert scope_of("tests/test_proxy_playwright.py::test_y") == "group browser"
    assert scope_of("tests/test_lint.py::test_z") == "tests/test_lint.py"


def test_every_benchmark_imports_what_exists() -> None:
    """Regression: a module split moved `snapshot_text` and `bench_cli.py` failed at its first
    line; no test runs the benchmarks. Every `from visiongate... import name` in `bench/`
    (at any depth of the file) must name a module and a name that exist."""
    import ast
    import importlib

    missing = []
    files = sorted((ROOT / "bench").glob("*.py"))
    assert len(files) > 5
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if not node.module.startswith("visiongate"):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{node.module}.{alias.name}")
                    except ImportError:
                        missing.append(f"{file.name}: {node.module}.{alias.name}")
    assert missing == []
