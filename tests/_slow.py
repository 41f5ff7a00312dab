"""Which tests are `slow`, by rule: what a test uses, read from its code (CONTRIBUTING.md).

A test is slow when its function, its fixtures, or the functions and classes of `tests/` they
call (followed a few levels, never into the package itself) name something heavy: a process
(`subprocess`, the MCP servers' commands, the proxy), a browser, the OCR models, the
2560x1440 screenshot, the clock (`sleep`). Property tests (hypothesis) and fuzzers
(`test_*_fuzz.py`) run hundreds of cases and are slow too. A test that is slow for another
reason says so with `@pytest.mark.slow`; `conftest.py` lists, after a run, unmarked tests
that took longer than `REPORT_SECONDS`.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest

TESTS: Final = Path(__file__).parent
REPORT_SECONDS: Final = 2.0

HEAVY: Final[dict[str, str]] = {
    "subprocess": "starts a process",
    "ProcessPoolExecutor": "starts processes",
    "server_command": "starts an MCP server over stdio",
    "everything_command": "starts the npm reference MCP server",
    "filesystem_command": "starts the npm filesystem MCP server",
    "playwright_command": "drives a browser through @playwright/mcp",
    "start_gateway": "starts `visiongate proxy --listen`",
    "stdio_client": "starts an MCP server over stdio",
    "open_session": "starts an MCP server over stdio",
    "call_and_route": "starts an MCP server over stdio",
    "call_mcp_tool": "starts an MCP server over stdio",
    "proxied": "starts `visiongate proxy`",
    "RawClient": "starts `visiongate proxy`",
    "find_chromium": "drives a browser",
    "LocalOCRBackend": "loads the OCR models",
    "screenshot_png": "puts 2560x1440 screenshots through the image stage",
    "sleep": "waits on the clock",
}
"""A name in a test's code -> why that makes the test slow."""

GROUPS: Final[dict[str, str]] = {
    "drives a browser": "browser",
    "drives a browser through @playwright/mcp": "browser",
    "starts the npm reference MCP server": "npm",
    "starts the npm filesystem MCP server": "npm",
}
"""Why a test is slow -> the xdist group it runs in (`--dist loadgroup`): one worker runs a
group's tests one after another, so two Chromiums or two node servers never compete for the
two cores (and their long start-ups) with each other."""

_DEPTH: Final = 4


def slow_reason(item: pytest.Item) -> str | None:
    """Why `item` is slow, or None."""
    function = getattr(item, "obj", None)
    if not callable(function):
        return None  # a policy test file's case (`visiongate test` items): a table look-up
    path = Path(str(item.path))
    if path.name.endswith("_fuzz.py"):
        return "a fuzzer"
    if getattr(function, "is_hypothesis_test", False):
        return "a property test: hundreds of generated cases"
    found = heavy_uses(item)
    return found[0] if found else None


def heavy_uses(item: pytest.Item) -> list[str]:
    """Every reason in `HEAVY` that `item`'s code and fixtures name, sorted."""
    function = getattr(item, "obj", None)
    if not callable(function):
        return []
    used = set(_names_used(_unwrapped(function)))
    for fixture in _fixture_functions(item):
        used |= _names_used(fixture)
    return sorted({HEAVY[name] for name in used & HEAVY.keys()})


@functools.cache
def _names_used(thing: Any) -> frozenset[str]:
    """`_names` of a test function or a fixture, once: the cases of a parametrized test and
    the tests sharing a fixture would each walk the same code again."""
    return frozenset(_names(thing, _DEPTH, set()))


def xdist_group(item: pytest.Item) -> str | None:
    """The group `item` runs in under xdist (`GROUPS`), or None."""
    return next((GROUPS[use] for use in heavy_uses(item) if use in GROUPS), None)


GROUP_FILES: Final[dict[str, str]] = {
    "test_gateway_everything.py": "npm",
    "test_gateway_shared.py": "npm",
    "test_proxy_everything.py": "npm",
    "test_proxy_filesystem.py": "npm",
    "test_proxy_tools.py": "npm",
    "test_pictures_browser.py": "browser",
    "test_playground_browser.py": "browser",
    "test_proxy_playwright.py": "browser",
}
"""The files of each group, as their tests' markers say (`GROUPS`; `test_habits.py` checks
that the two agree). The suite's scheduler (`conftest.py`) hands a group's files to one worker
as one unit of work, so no worker waits on another's group lock (a wait of 12 s before, in
`test_proxy_tools.py`'s set-up), and they come first: the npm servers' files are the longest
unit of the suite (about a minute)."""

LONGEST_FIRST: Final = (
    "test_proxy_hostile_peers.py",
    "test_policy_fuzz.py",
    "test_exit_codes.py",
    "test_proxy_policy_path.py",
    "test_cli_streams.py",
    "test_agent_frameworks.py",
    "test_gateway_hygiene.py",
    "test_proxy_signals.py",
    "test_images_legibility.py",
    "test_gateway_security.py",
    "test_mcp_sdk_versions.py",
    "test_install_layout.py",
    "test_proxy_ctrl_c.py",
    "test_mcp_client_limits.py",
    "test_catalog_update.py",
    "test_history.py",
    "test_doc_examples.py",
    "test_proxy_example.py",
    "test_gateway_lifecycle.py",
    "test_cli_routing.py",
    "test_proxy_resources.py",
    "test_proxy_hostile.py",
    "test_gateway.py",
    "test_cli_imports.py",
    "test_cli_mcp_limits.py",
    "test_pair_cache.py",
    "test_gateway_nginx.py",
)
"""The files that take longest on one worker (20-75 s each at a load of 4, the sums of their
tests' times in a whole run), longest first, none of a group. Work is handed out in collection
order (`--no-loadscope-reorder`: xdist's own order, by number of tests, handed out the long
files of one or two tests last, and a run ended on them), so these start first, after the
groups, and every file left for the end is short."""


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` with the groups' files first (`GROUP_FILES`, a group's files together), then
    those of `LONGEST_FIRST` in its order; the rest as collected."""
    groups = list(dict.fromkeys(GROUP_FILES.values()))
    rank = {name: groups.index(group) for name, group in GROUP_FILES.items()}
    rank |= {name: len(groups) + index for index, name in enumerate(LONGEST_FIRST)}
    # `sorted` is stable: within a rank, and for every file not listed, collection order.
    return sorted(items, key=lambda item: rank.get(Path(str(item.path)).name, len(rank)))


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to under the suite's scheduler: its group when its file
    is one of a group's (`GROUP_FILES`), else its file (`--dist loadfile`'s own unit)."""
    file = nodeid.split("::", 1)[0]
    group = GROUP_FILES.get(file.rsplit("/", 1)[-1])
    return f"group {group}" if group is not None else file


def _unwrapped(function: Callable[..., Any]) -> Callable[..., Any]:
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
    return inspect.unwrap(inner or function)


def _fixture_functions(item: pytest.Item) -> Iterator[Callable[..., Any]]:
    """The fixtures `item` runs, but not a session's autouse ones (asked for by no one): they
    run once for every session, the fast subset's too, so they make no one test slow. (The
    end-of-session check for leftover servers waits on the clock, and marked 3,238 of the 3,348
    tests slow: the fast subset was 110 tests.)"""
    info = getattr(item, "_fixtureinfo", None)
    definitions = [
        definition
        for name in getattr(item, "fixturenames", ())
        for definition in (info.name2fixturedefs.get(name, ()) if info else ())
    ]
    requested = set(getattr(info, "argnames", ()))
    for definition in definitions:
        requested |= set(getattr(definition, "argnames", ()))
    for definition in definitions:
        if definition.scope == "session" and definition.argname not in requested:
            continue
        if _ours(definition.func):
            yield definition.func


def _ours(thing: Any) -> bool:
    """Defined in a file under `tests/` (not the package, not a library)."""
    code = getattr(thing, "__code__", None)
    if code is not None:
        return _under_tests(code.co_filename)
    module = sys.modules.get(getattr(thing, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    return file is not None and _under_tests(file)


@functools.cache
def _under_tests(file: str) -> bool:
    return Path(file).resolve().is_relative_to(TESTS)


def _names(thing: Any, depth: int, seen: set[int]) -> Iterator[str]:
    """Every global and attribute name `thing`'s code uses, and that of the functions and
    classes of `tests/` it names, `depth` levels down."""
    if id(thing) in seen:
        return
    seen.add(id(thing))
    if inspect.isclass(thing):
        for member in vars(thing).values():
            function = getattr(member, "__func__", member)
            if inspect.isfunction(function):
                yield from _names(function, depth, seen)
        return
    code = getattr(thing, "__code__", None)
    if code is None:
        return
    scope = getattr(thing, "__globals__", {})
    for name in _code_names(code):
        yield name
        target = _unwrapped_helper(scope.get(name))
        if depth and (inspect.isfunction(target) or inspect.isclass(target)) and _ours(target):
            yield from _names(target, depth - 1, seen)


def _unwrapped_helper(thing: Any) -> Any:
    """The function under a decorator that keeps it (`functools.wraps`: `contextmanager`,
    `asynccontextmanager`): read as itself, the wrapper's code is the library's."""
    return inspect.unwrap(thing) if inspect.isfunction(thing) else thing


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:
        # Nested functions, lambdas, comprehensions; not a class defined inside a helper: that
        # is a stand-in server's request handler, whose waits (a runtime told to answer
        # slowly) run on the server's thread when a test asks for them, not in every test.
        if isinstance(constant, types.CodeType) and constant.co_flags & inspect.CO_NEWLOCALS:
            yield from _code_names(constant)
