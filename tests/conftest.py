"""Fixtures shared by the routing tests, and the `slow` marker set by rule (`_slow.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _routing_helpers import VisionEndpoint, vision_endpoint, without_proxies
from _slow import REPORT_SECONDS, slow_reason

_FAST: set[str] = set()
"""The tests not marked slow."""
_TOOK: dict[str, float] = {}
"""Seconds each test took (setup, call and teardown)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is None and (reason := slow_reason(item)):
            item.add_marker(pytest.mark.slow(reason=reason))
        if item.get_closest_marker("slow") is None:
            _FAST.add(item.nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _TOOK[report.nodeid] = _TOOK.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Unmarked tests that took long: mark them slow (`@pytest.mark.slow`) or make them fast.
    A note, not a failure: a loaded machine makes anything slow."""
    long = sorted(
        (
            (took, nodeid)
            for nodeid, took in _TOOK.items()
            if nodeid in _FAST and took > REPORT_SECONDS
        ),
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
        yield
