"""Fixtures shared by the routing tests, and the `slow` marker set by rule (`_slow.py`)."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import _warm
import pytest
from _cpu import measured
from _leftovers import mark_this_process, stop_leftovers
from _routing_helpers import VisionEndpoint, vision_endpoint, without_proxies
from _slow import REPORT_SECONDS, longest_first, scope_of, slow_reason, xdist_group

from visiongate.kernel._platform import exclusive

# With `PYTHONDONTWRITEBYTECODE=1` (set on this machine) pytest rewrote the asserts of every
# test module, and the test process compiled every package module, from source on every run:
# collection was 15 s of CPU, 9 s once the bytecode is cached. The test process writes its
# bytecode (gitignored `__pycache__`, checked against the source as always); the processes the
# tests start read it, whatever they are told.
sys.dont_write_bytecode = False

_TOOK: dict[str, float] = {}
"""Seconds each unmarked test took (setup, call and teardown)."""


def pytest_configure(config: pytest.Config) -> None:
    """Every process a test starts gets SIGINT as a terminal gives it. A CI runner or a
    script's `cmd &` can start the suite with SIGINT ignored, which every child inherits, and
    visiongate then leaves it ignored, as a background job should: the tests of a Ctrl-C would
    test nothing (`test_proxy_signals` starts a proxy with SIGINT ignored on purpose)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` starts two workers a core for the whole suite. Much of its time is spent
    waiting on the processes it starts (a proxy, a server, a browser, a grace period): on two
    cores it took 8 min 51 s with two workers and 5 min 35 s with four, for the same CPU time
    (CONTRIBUTING.md, "workers"). The fast subset (`-m "not slow"`) gets a worker a core: the
    `slow` rule marks the tests that start a process, so it computes, and every extra worker
    only collects the suite once more. `PYTEST_XDIST_AUTO_NUM_WORKERS` still decides when it
    is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    if not hasattr(os, "sched_getaffinity"):
        return None
    cores = len(os.sched_getaffinity(0))
    return cores if config.getoption("markexpr") == "not slow" else 2 * cores


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadfile`, a group's files are one unit of work (`_slow.scope_of`): one
    worker runs them back to back, as `--dist loadgroup` would if its marker still took (see
    below); every other file is a unit of its own, handed out in collection order."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupsAsOneUnit(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return GroupsAsOneUnit(config, log)


# First, before xdist's own hook would append each test's group to its id for
# `--dist loadgroup`; that append no longer takes on pytest 9.2 (pytest-xdist#1386), so the
# suite runs `--dist loadfile` and `_one_group_at_a_time` below keeps the groups apart.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = longest_first(items)
    for item in items:
        if item.get_closest_marker("slow") is None and (reason := slow_reason(item)):
            item.add_marker(pytest.mark.slow(reason=reason))
        if item.get_closest_marker("xdist_group") is None and (group := xdist_group(item)):
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[object]:
    """Collection runs without the garbage collector (0.7 s of CPU went to it in a run of
    collection alone), and what it built lives as long as the test process (every test
    module, the SDK, Pillow, the parametrized cases: about 290,000 objects a worker): frozen
    (`gc.freeze`), Python's full collections stop walking it. Four of the fuzzing and history
    files run alone made 109 of those, 11.7 s of their 38.8 s of CPU; frozen, 2.2 s and 26.9 s.
    What a test makes is still collected as before, in batches of 10,000 new objects rather
    than 700 (a fourteenth of the collections; 45.2 s of CPU for six such files, 42.0 s). An
    xdist controller, which collects nothing, gets its collector back the same way."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.freeze()
        gc.set_threshold(10_000, *gc.get_threshold()[1:])
        gc.enable()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A module that starts warm servers (`_warm`) gets its process's fork server first, before
    its fixtures: the fast subset never starts one."""
    module = getattr(item, "module", None)
    if module is not None and _warm.wanted_by(module):
        _warm.start()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """CPU seconds per test, children included, when `VISIONGATE_TEST_CPU` names a file."""
    with measured(item.nodeid):
        return (yield)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # The report's keywords, not the collection: under xdist the workers collect, and the
    # reports reach this process with the markers among their keywords.
    if "slow" not in report.keywords:
        _TOOK[report.nodeid] = _TOOK.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Unmarked tests that took long: mark them slow (`@pytest.mark.slow`) or make them fast.
    A note, not a failure: a loaded machine makes anything slow."""
    long = sorted(
        ((took, nodeid) for nodeid, took in _TOOK.items() if took > REPORT_SECONDS),
        reverse=True,
    )
    if long:
        terminalreporter.section(f"unmarked tests over {REPORT_SECONDS:g} s")
        for took, nodeid in long:
            terminalreporter.line(f"{took:6.2f}s {nodeid}")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[VisionEndpoint]:
    """A chat-completions vision endpoint on loopback, with proxies unset so it is reached."""
    with without_proxies(), vision_endpoint() as running:
        yield running


@pytest.fixture(autouse=True, scope="session")
def _no_test_server_left_running() -> Iterator[None]:
    """First in, so last out: at the session's end no test server it started runs on
    (`_leftovers`: found by a token in their environment, not by a file they may not have
    written; reported, then killed)."""
    token = mark_this_process()
    yield
    _warm.stop()  # the fork server holds the token too; a server it started still counts
    left = stop_leftovers(token)
    assert not left, f"test servers left running by this session (killed now): {left}"


@pytest.fixture(autouse=True, scope="session")
def _private_state_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Learned routes default to `$XDG_STATE_HOME/visiongate/routes.json`: point it at an empty
    directory, so no test reads or writes the routes of the machine it runs on. The policy
    compile cache gets a private directory too (and every load of the suite goes through it),
    and so does the facts cache (refreshed catalog, probed local runtimes)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
        patch.setenv("VISIONGATE_POLICY_CACHE", str(tmp_path_factory.mktemp("policy-cache")))
        # Refreshed catalogs and probed runtimes: none of the machine's own.
        patch.setenv("VISIONGATE_FACTS_CACHE", str(tmp_path_factory.mktemp("facts-cache")))
        # The image cache's default home, and whatever else follows XDG: one per worker.
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(autouse=True, scope="module")
def _one_group_at_a_time(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Under xdist, a module with tests of a group (a browser, the npm servers: `_slow.GROUPS`)
    holds that group's lock from its first fixture to its last teardown, so no other worker
    runs the group's tests meanwhile. The lock files sit in the run's folder, which the
    workers share (each worker's own temporary folder is inside it)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield  # one process runs everything one after another
        return
    groups = sorted(
        {
            str(marker.args[0])
            for item in request.session.items
            if item.path == request.path
            for marker in item.iter_markers("xdist_group")
        }
    )
    shared = tmp_path_factory.getbasetemp().parent
    with ExitStack() as held:
        for group in groups:  # sorted: two modules never wait on each other in a circle
            held.enter_context(exclusive(shared / f"group-{group}.lock"))
        yield


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the hostile server's `stubborn` mode (`_hostile_proxy.py`) writes its pid and its
    child's: the signal tests of the proxy (`test_proxy_signals.py`, `test_proxy_ctrl_c.py`)."""
    path = tmp_path / "pids"
    monkeypatch.setenv("HOSTILE_PIDS", str(path))
    return path
