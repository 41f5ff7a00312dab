"""The exit-code table, observed (issue 28): every command x {ok, findings, bad usage, bad
input, full disk (/dev/full), closed stdout}, written as data, run as the user runs it; the
table in `--help` and the README says what this matrix observes, and nothing else.

A cell is `(argv, code)`, or a sentence saying why the case does not apply to the command.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from _cli_helpers import (
    FACTS,
    POLICIES,
    ROOT,
    TARGET,
    environment,
    no_traceback,
    run,
    run_process,
)
from _warm import server_command

from visiongate.adapters.mcp.example_server import screenshot_png
from visiongate.cli import COMMANDS, EXIT_CODES, main
from visiongate.engine import Gate

CASES = ("ok", "findings", "bad usage", "bad input", "full disk", "closed stdout")
MEANINGS = {
    0: "ok",
    1: "findings",
    2: "usage or input error",
    3: "a policy or configuration that fails to load",
    4: "`mcp call`: the tool answered with an error",
}
# Which codes each case may end with, as the table defines them.
ALLOWED = {
    "ok": {0},
    "findings": {1},
    "bad usage": {2},
    "bad input": {2, 3},
    "full disk": {2},
    "closed stdout": {2},
    "tool error": {4},
    "unknown name": {2},
}

Cell = tuple[list[str], int] | str


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("matrix")
    (folder / "screen.png").write_bytes(screenshot_png())
    clean, stale = folder / "clean.jsonl", folder / "stale.jsonl"
    gate = Gate.load(trace=clean, routes=False)
    gate.decide("anthropic", "claude-sonnet-4-5")
    record = json.loads(clean.read_text())
    record["policy"] = {**record["policy"], "sha256": "0" * 64, "version": "0.9.0"}
    stale.write_text(json.dumps(record) + "\n")  # decided under an older content: a finding
    broken = folder / "broken.yaml"
    broken.write_text(
        (POLICIES / "default.yaml").read_text().replace("lane: text", "lane: txet", 1)
    )
    unformatted = folder / "unformatted.yaml"  # a rule's keys out of their order
    rule = "  - id: text-mode\n    when: {mode: text}\n    lane: text\n"
    swapped = "  - id: text-mode\n    lane: text\n    when: {mode: text}\n"
    unformatted.write_text((POLICIES / "default.yaml").read_text().replace(rule, swapped, 1))
    failing = folder / "failing.test.yaml"
    failing.write_text(
        "visiongate: policy-test\npolicy: default\ncases:\n"
        "  - name: wrong on purpose\n"
        "    facts: {mode: text, catalog: vision, aux: unset, path: accepts}\n"
        "    expect: native\n"
    )
    return {
        "png": str(folder / "screen.png"),
        "clean": str(clean),
        "stale": str(stale),
        "broken": str(broken),
        "unformatted": str(unformatted),
        "failing": str(failing),
        "gap": str(ROOT / "tests" / "data" / "lint" / "conflict.yaml"),
        "empty": str(folder / "docs"),
        "cache": str(folder / "cache"),
        "missing": str(folder / "missing.yaml"),
    }


def matrix(f: dict[str, str]) -> dict[str, dict[str, Cell]]:
    """command -> case -> cell."""
    server = ["--", *server_command()]
    route = [
        "route",
        "--source",
        "computer_use",
        "--image",
        f["png"],
        *TARGET,
        "--cache-dir",
        f["cache"],
    ]
    mcp = ["mcp", "call", *TARGET, "--cache-dir", f["cache"], "--tool"]
    no_server = "probe: needs a model that reads the code back (tests/test_probe.py, loopback)"
    probe = [
        "probe",
        "--provider",
        "openai",
        "--model",
        "gpt-4o",
        "--no-key",
        "--timeout",
        "5",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]  # nothing listens: inconclusive
    return {
        "version": {
            "ok": (["version"], 0),
            "findings": "prints versions: nothing to find",
            "bad usage": (["version", "--jsn"], 2),
            "bad input": "reads no input",
        },
        "decide": {
            "ok": (["decide", "--facts", FACTS], 0),
            "findings": "a decision is not a finding",
            "bad usage": (["decide", "--provider", "x"], 2),
            "bad input": (["decide", "--facts", FACTS, "--policy", f["broken"]], 3),
        },
        "explain": {
            "ok": (["explain"], 0),
            "findings": "prints a table: nothing to find",
            "bad usage": (["explain", "--polcy", "default"], 2),
            "bad input": (["explain", "--policy", f["broken"]], 3),
        },
        "lint": {
            "ok": (["lint", str(POLICIES / "default.yaml")], 0),
            "findings": (["lint", f["gap"]], 1),
            "bad usage": (["lint", "--stirct"], 2),
            "bad input": (["lint", f["missing"]], 2),
        },
        "fmt": {
            "ok": (["fmt", "--check", str(POLICIES / "default.yaml")], 0),
            "findings": (["fmt", "--check", f["unformatted"]], 1),
            "bad usage": (["fmt", "--chek"], 2),
            "bad input": (["fmt", "--check", f["broken"].replace("broken", "nope")], 2),
        },
        "test": {
            "ok": (["test", str(POLICIES / "examples" / "never-pixels.test.yaml")], 0),
            "findings": (["test", f["failing"]], 1),
            "bad usage": (["test", "--run", "("], 2),
            "bad input": (["test", f["missing"]], 2),
        },
        "docs": {
            "ok": (["docs", "--check"], 0),
            "findings": (["docs", "--check", "--out", f["empty"]], 1),
            "bad usage": (["docs", "--chek"], 2),
            "bad input": (["docs", "--check", f["broken"]], 3),
        },
        "diff": {
            "ok": (["diff", "default", "default"], 0),
            "findings": (["diff", "default", "examples/never-pixels"], 1),
            "bad usage": (["diff", "default"], 2),
            "bad input": (["diff", "default", f["broken"]], 3),
        },
        "rule": {
            "ok": (["rule", "gap"], 0),
            "findings": "prints a page: nothing to find",
            "bad usage": (["rule", "gapp"], 2),
            "bad input": "reads no input",
        },
        "audit": {
            "ok": (["audit", f["clean"]], 0),
            "findings": (["audit", f["stale"]], 1),
            "bad usage": (["audit", f["clean"], "--lane", "nativ"], 2),
            "bad input": (["audit", f["missing"]], 2),
        },
        "route": {
            "ok": (route, 0),
            "findings": "routes a result: nothing to find",
            "bad usage": (["route", "--source", "mpc", "--image", f["png"], *TARGET], 2),
            "bad input": (["route", "--source", "browser", "--image", f["missing"], *TARGET], 2),
        },
        "mcp": {
            "ok": ([*mcp, "screenshot", *server], 0),
            "findings": "routes a result: nothing to find",
            "tool error": ([*mcp, "nosuchtool", *server], 4),
            "bad usage": ([*mcp, "screenshot", "--timout", "1", *server], 2),
            "bad input": ([*mcp, "screenshot", "--", "nosuchserver"], 2),
        },
        "proxy": {
            # With no client on its input, the proxy starts the server and ends the session.
            "ok": (["proxy", *TARGET, *server], 0),
            "findings": "relays: nothing to find",
            "bad usage": (["proxy", *TARGET], 2),
            "bad input": (["proxy", *TARGET, "--", "/no/such"], 2),
            "full disk": "writes protocol messages only, and none without a client",
        },
        "playground": {
            "ok": "serves until stopped: tests/test_playground*.py drive it on loopback",
            "findings": "a page to edit in: nothing to find",
            "bad usage": (["playground", "--port", "70000"], 2),
            "bad input": (["playground", "--config", f["missing"]], 2),
            # It cannot tell its address (which carries the token): it ends before serving.
            "full disk": (["playground"], 2),
            "closed stdout": (["playground"], 2),
        },
        "registry": {
            "ok": (["registry", "show", "anthropic"], 0),
            # A look-up: a provider it does not list is an input error (issue 35).
            "findings": "a look-up: a name it does not list is an input error (2)",
            "bad usage": (["registry"], 2),
            "bad input": (["registry", "show", "anthropic", "--registry", f["missing"]], 2),
            "unknown name": (["registry", "show", "nosuchprovider"], 2),
        },
        "catalog": {
            "ok": (["catalog", "show", "anthropic"], 0),
            "findings": "a look-up: a name it does not list is an input error (2)",
            "bad usage": (["catalog"], 2),
            "unknown name": (["catalog", "show", "nosuchprovider"], 2),
            # A port nothing listens on: refused at once, the stored catalog stays.
            "bad input": (["catalog", "update", "--url", "http://127.0.0.1:9/api.json"], 2),
        },
        "routes": {
            "ok": (["routes", "list"], 0),
            "findings": (["routes", "forget", "anthropic", "nosuchmodel"], 1),
            "bad usage": (["routes"], 2),
            "bad input": (["routes", "list", "--config", f["missing"]], 2),
        },
        "probe": {
            "ok": no_server,
            "findings": (probe, 1),
            "bad usage": (["probe", "--provider", "openai"], 2),
            "bad input": (
                ["probe", "--provider", "openai", "--model", "m", "--key-env", "NO_SUCH_KEY_VAR"],
                2,
            ),
        },
        "demo": {
            "ok": (["demo", "--out", f["empty"] + "-demo"], 0),
            "findings": "a walk-through: nothing to find",
            "bad usage": (["demo", "--timout", "1"], 2),
            "bad input": (["demo", "--out", f["png"]], 2),
        },
    }


def _with_outputs(cells: dict[str, dict[str, Cell]]) -> dict[str, dict[str, Cell]]:
    """Full disk and closed stdout: the ok call (or the findings one) with its output gone."""
    for row in cells.values():
        if "full disk" in row and "closed stdout" in row:
            continue  # a server command says them itself
        source = next(row[c] for c in ("ok", "findings") if not isinstance(row.get(c, ""), str))
        assert not isinstance(source, str)
        for case in ("full disk", "closed stdout"):
            row.setdefault(case, (source[0], 2))
    return cells


FILES = ("png", "clean", "stale", "broken", "unformatted", "failing", "gap", "empty", "cache")
NAMES = list(matrix(dict.fromkeys((*FILES, "missing"), "")))


def test_the_matrix_has_every_command_and_every_case() -> None:
    assert sorted(NAMES) == sorted(COMMANDS)
    for row in matrix(dict.fromkeys((*FILES, "missing"), "")).values():
        assert set(CASES[:4]) <= set(row)


def _cases() -> list[tuple[str, str]]:
    """Every (command, case): the six of every command, and those only some have (`mcp call`'s
    tool error)."""
    rows = _with_outputs(matrix(dict.fromkeys((*FILES, "missing"), "")))
    return [(command, case) for command, row in rows.items() for case in row]


# The commands whose full disk and closed stdout run as a real process: `version` for every
# command's path (Python starts with `sys.stdout` None when descriptor 1 is closed, and the
# guard's flush at exit meets /dev/full), the two server commands, which look at descriptor 1
# itself and would serve on in this process, and `demo`, which in a process of its own ends
# within 2 s and in this one ran its whole walk-through first. Every other command runs in this
# process with the same two streams: `sys.stdout` None, as Python sets it for a closed
# descriptor 1, or a file open on /dev/full itself, so the write that fails is a real ENOSPC.
IN_A_PROCESS = frozenset({"version", "proxy", "playground", "demo"})


def _run_here(argv: list[str], case: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The command in this process, its standard output /dev/full or closed."""
    capsys.readouterr()
    full = open("/dev/full", "w") if case == "full disk" else None  # noqa: SIM115 (closed below)
    captured, sys.stdout = sys.stdout, full  # type: ignore[assignment]
    try:
        code = main(argv)
    finally:
        sys.stdout = captured
        if full is not None:
            full.close()
    return code, capsys.readouterr().err


def _run(argv: list[str], case: str, home: Path) -> tuple[int, str]:
    """The command as a real process; stdout to /dev/full, closed, or /dev/null."""
    stdout: Any = subprocess.DEVNULL
    preexec = None
    if case == "full disk":
        stdout = open("/dev/full", "wb")  # noqa: SIM115 (closed below)
    elif case == "closed stdout":
        preexec = lambda: os.close(1)  # noqa: E731
    try:
        done = subprocess.run(
            [sys.executable, "-m", "visiongate", *argv], cwd=ROOT, env=environment(home),
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True,
            timeout=180, check=False, preexec_fn=preexec,
        )  # fmt: skip
    finally:
        if case == "full disk":
            stdout.close()
    return done.returncode, done.stderr


@pytest.mark.parametrize(("command", "case"), _cases())
def test_each_command_exits_as_the_table_says(
    command: str,
    case: str,
    files: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cell = _with_outputs(matrix(files))[command][case]
    if isinstance(cell, str):
        pytest.skip(cell)
    argv, expected = cell
    assert expected in ALLOWED[case], (command, case)
    if case in ("full disk", "closed stdout"):
        here = command not in IN_A_PROCESS
        code, err = _run_here(argv, case, capsys) if here else _run(argv, case, tmp_path)
        why = "no space left on device" if case == "full disk" else "standard output is closed"
        assert code == expected, err
        assert f"cannot write the output: {why}" in err and no_traceback(err), err
        return
    code, _out, err = run(capsys, *argv)
    assert code == expected, err
    if expected == 2:
        assert err.strip(), "a usage or input error says why on standard error"


def _table(text: str) -> dict[int, str]:
    return {int(code): meaning for code, meaning in re.findall(r"^ {2}(\d) {2}(.+)$", text, re.M)}


def test_help_and_readme_list_exactly_the_codes_the_matrix_observes(files: dict[str, str]) -> None:
    observed = {
        cell[1]
        for row in _with_outputs(matrix(files)).values()
        for cell in row.values()
        if not isinstance(cell, str)
    }
    shown = _table(EXIT_CODES)
    assert set(shown) == observed == set(MEANINGS)
    for code, meaning in MEANINGS.items():
        assert shown[code].startswith(meaning), code
    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| `(\d)` \| (.+?) \|$", readme, re.M))
    assert {int(code) for code in rows} == observed
    for code, meaning in MEANINGS.items():
        assert rows[str(code)].startswith(meaning), code


_INTERRUPTED_LOAD = """
import sys

MODULE = sys.argv.pop(1)  # the rest is the command line

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == MODULE:
            raise KeyboardInterrupt  # Ctrl-C while this module loads
        return None

sys.meta_path.insert(0, Interrupting())
from visiongate._entry import run
raise SystemExit(run())
"""


@pytest.mark.parametrize(
    "module, argv",
    [
        ("visiongate.cli", []),
        # Regression: a Ctrl-C after the command line loaded and before `main` reached its own
        # `try` (its first imports, and `proxy`'s deferral of the signals) printed Python's
        # traceback: seen once in `test_proxy_ctrl_c` on a slow machine.
        ("visiongate.cli._stdout", []),
        ("visiongate.cli._signals", ["proxy"]),
    ],
)
def test_a_ctrl_c_while_the_command_line_loads_is_one_line_and_130(
    module: str, argv: list[str]
) -> None:
    """The console script starts at `visiongate._entry:run` (as `python -m visiongate` does),
    which loads and runs the command line inside its own `try`: before, the generated script
    imported `visiongate.cli` itself, and a Ctrl-C in that import printed Python's traceback."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"visiongate": "visiongate._entry:run"}
    ended = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_LOAD, module, *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ended.returncode, ended.stderr, ended.stdout) == (
        130, "visiongate: stopped by SIGINT\n", "",
    )  # fmt: skip
    entry = ast.parse((ROOT / "src" / "visiongate" / "_entry.py").read_text())
    imported = {
        alias.name for node in entry.body if isinstance(node, ast.Import) for alias in node.names
    }
    assert imported == {"sys"}  # nothing else stands between start-up and the `try`


_WRAPPED_LOAD = """
import dataclasses
import signal
import sys

MODULE = sys.argv.pop(1)  # the rest is the command line
setting = dataclasses.Field.__set_name__

def interrupting(field, owner, name):
    if owner.__module__ == MODULE and not getattr(interrupting, "done", False):
        interrupting.done = True
        signal.raise_signal(signal.SIGINT)  # lands in `__set_name__`, which 3.11 wraps
    setting(field, owner, name)

dataclasses.Field.__set_name__ = interrupting
from visiongate._entry import run
raise SystemExit(run())
"""


@pytest.mark.parametrize(
    "argv, said",
    [
        (["decide", *TARGET], "visiongate: stopped by SIGINT"),
        (["proxy", *TARGET, "--", sys.executable, "-c", "import time; time.sleep(60)"],
         "visiongate proxy: stopped by SIGINT; the server was stopped"),
    ],
    ids=["decide", "proxy"],
)  # fmt: skip
def test_a_ctrl_c_python_wraps_while_a_dataclass_is_made_is_one_line_and_130(
    argv: list[str], said: str
) -> None:
    """Regression: Python 3.11 turns what a `__set_name__` raises into `RuntimeError("Error
    calling __set_name__ on 'Field' instance ...")`. A Ctrl-C 0.2 s into a proxy landed there
    while `engine._gate` made its `_State` dataclass, and the proxy printed a traceback and
    exited 1 (`test_proxy_signals.py`, once in `.ci/run`)."""
    ended = subprocess.run(
        [sys.executable, "-c", _WRAPPED_LOAD, "visiongate.engine._gate", *argv],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ended.returncode, ended.stderr.strip()) == (130, said), ended.stderr


_SWALLOWED_LOAD = """
import signal
import sys

class Swallowing:
    def find_spec(self, name, path=None, target=None):
        if name == "visiongate.cli":
            try:  # a Ctrl-C where Python, or a library, swallows what it raises
                signal.raise_signal(signal.SIGINT)
            except BaseException:
                pass
        return None

sys.meta_path.insert(0, Swallowing())
from visiongate._entry import run
raise SystemExit(run())
"""


def test_a_ctrl_c_swallowed_while_the_proxy_loads_still_stops_it() -> None:
    """Regression: a `KeyboardInterrupt` raised inside a callback of Python's own (an import
    lock's) is printed as "Exception ignored" and lost, and a proxy interrupted that early
    would run on in front of its server (`test_proxy_ctrl_c` saw one run on, in 1 of 466 starts
    on a loaded machine, cause not proven). For `proxy` and `mcp`, `_entry` notes the signals
    before it loads anything, so
    the Ctrl-C stops the proxy however early it came; here its input is closed at once, and
    without the note it ended 0, as after a normal session."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    ended = subprocess.run(
        [sys.executable, "-c", _SWALLOWED_LOAD, "proxy", *TARGET, "--", *sleeper],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (ended.returncode, ended.stdout) == (130, ""), ended.stderr
    assert ended.stderr == "visiongate proxy: stopped by SIGINT; the server was stopped\n"


# -- files that are no regular file (issue 36) ------------------------------------------------

NOT_FILES = {
    "a FIFO": ("not a regular file (a FIFO)", lambda path: os.mkfifo(path)),
    "a /dev/zero link": (
        "not a regular file (a character device)",
        lambda path: path.symlink_to("/dev/zero"),
    ),
}
READERS = {
    "lint --config": ["lint", "--config", "{}"],
    "fmt --check": ["fmt", "--check", "{}"],
    "decide --config": ["decide", "--config", "{}", *TARGET],
    "decide --policy": ["decide", "--policy", "{}", *TARGET],
    "explain --policy": ["explain", "--policy", "{}"],
    "diff": ["diff", "{}", "default"],
    "route --image": ["route", "--source", "mcp", "--image", "{}", *TARGET],
    "audit": ["audit", "{}"],
    "routes list --routes": ["routes", "list", "--routes", "{}"],
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("kind", NOT_FILES)
@pytest.mark.parametrize("reader", READERS)
def test_a_path_that_is_no_regular_file_is_refused_unread(
    reader: str, kind: str, tmp_path: Path
) -> None:
    """Regression (issue 36): a FIFO hung `lint --config` and `decide --config`, `/dev/zero`
    grew `lint --config` to 10.4 GB and `fmt --check` to 8 GB, `route --image` to 19 GB, and
    `decide`/`explain`/`diff --policy` said "no such file". Each is one line and exit 2."""
    said, make = NOT_FILES[kind]
    path = tmp_path / "input.yaml"
    make(path)
    argv = [part.replace("{}", str(path)) for part in READERS[reader]]
    command = [sys.executable, "-m", "visiongate", *argv]
    try:
        done = subprocess.run(
            command, env=environment(tmp_path), capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{reader}` on {kind} ran on 30 s")
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert done.stderr.count("\n") == 1 and said in done.stderr, done.stderr
    assert no_traceback(done.stdout, done.stderr)


ROUTES_FILE_KINDS = {**NOT_FILES, "a directory": ("not a regular file (a directory)", Path.mkdir)}
ROUTES_FILE_READERS = {
    "decide": ["decide", "--config", "{}"],
    "routes list": ["routes", "list", "--config", "{}"],
    "registry show": ["registry", "show", "anthropic", "--config", "{}"],
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("kind", ROUTES_FILE_KINDS)
@pytest.mark.parametrize("reader", ROUTES_FILE_READERS)
def test_a_routes_file_that_is_no_regular_file_is_one_located_error(
    reader: str, kind: str, tmp_path: Path
) -> None:
    """Regression (issue 36): `visiongate.routes_file` naming a directory gave a bare `[Errno
    21] Is a directory` (a traceback for `routes list`), and a FIFO there hung every command
    that decides. It is an error at the config's key, exit 2, with nothing read."""
    said, make = ROUTES_FILE_KINDS[kind]
    routes = tmp_path / "routes.json"
    make(routes)
    config = tmp_path / "agent.yaml"
    config.write_text(
        "model:\n  provider: anthropic\n  default: claude-sonnet-4-5\n"
        f"visiongate:\n  routes_file: {routes}\n"
    )
    argv = [part.replace("{}", str(config)) for part in ROUTES_FILE_READERS[reader]]
    try:
        done = run_process(argv, tmp_path, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{reader}` with a routes file that is {kind} ran on 30 s")
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    (error,) = done.stderr.splitlines()
    assert error.startswith(f"{config}:5:16: error[unreadable-file]: "), done.stderr
    assert "`visiongate.routes_file`" in error and said in error, error
    assert "Errno" not in done.stderr and no_traceback(done.stdout, done.stderr)


def test_route_refuses_an_image_file_over_its_cap_without_reading_it(tmp_path: Path) -> None:
    """Regression (issue 36): a 2 GB file was read whole (7.1 GB) before it was refused."""
    huge = tmp_path / "huge.png"
    with huge.open("wb") as sparse:  # no disk used: a hole of 300 MB
        sparse.truncate(300 * 1024 * 1024)
    done = run_process(["route", "--source", "mcp", "--image", str(huge), *TARGET], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "larger than 268,435,456 bytes (314,572,800)" in done.stderr, done.stderr


FOLDER_READERS = {
    "lint DIR": (["lint", "{}"], 1),
    "fmt --check DIR": (["fmt", "--check", "{}"], 2),
    "docs --check DIR": (["docs", "--check", "{}"], 2),
    "test DIR": (["test", "{}"], 2),
    "test FILE": (["test", "{}/x.test.yaml"], 1),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("reader", FOLDER_READERS)
def test_a_fifo_among_the_files_a_command_looks_at_never_blocks_it(
    reader: str, tmp_path: Path
) -> None:
    """Regression (issue 36): the look at a file's head (is it a policy?) and the policy test
    loader opened files plainly, so a FIFO named like a policy or a test file hung `lint`,
    `fmt --check`, `docs --check` and `test` on its folder, and `test` on the file."""
    folder = tmp_path / "policies"
    folder.mkdir()
    os.mkfifo(folder / "edge.yaml")
    os.mkfifo(folder / "x.test.yaml")
    argv, code = FOLDER_READERS[reader]
    try:
        done = run_process(
            [part.replace("{}", str(folder)) for part in argv], tmp_path, cwd=tmp_path, timeout=30
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{reader}` with a FIFO in the folder ran on 30 s")
    assert done.returncode == code, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert no_traceback(done.stdout, done.stderr)


# -- the exit without teardown ------------------------------------------------------------------

_ENDING = """
import atexit, sys
from visiongate.kernel._exit import returned, skip_teardown
skip_teardown()
class Kept:
    def __del__(self):
        print("torn down", flush=True)
KEPT = Kept()
atexit.register(lambda: print("later handler ran"))
print("buffered, never flushed by hand", end="")
if sys.argv[1] == "returned":
    returned(3)
raise SystemExit(4)
"""


@pytest.mark.parametrize(
    ("how", "flags", "code", "out"),
    [
        ("returned", [], 3, "buffered, never flushed by handlater handler ran\n"),
        ("raised", [], 4, "buffered, never flushed by handlater handler ran\ntorn down\n"),
        (
            "returned",
            ["-X", "dev"],
            4,
            "buffered, never flushed by handlater handler ran\ntorn down\n",
        ),
    ],
    ids=["returned", "nothing returned", "development mode"],
)
def test_a_returned_process_skips_only_the_teardown(
    how: str, flags: list[str], code: int, out: str
) -> None:
    """`kernel._exit`: once the work returned, every `atexit` handler still runs and the
    buffered output is written, but no object is torn down (the exit code is the returned one);
    without a return, or under `-X dev`, Python's own exit runs as before."""
    done = subprocess.run(
        [sys.executable, *flags, "-c", _ENDING, how], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout) == (code, out)


_UNFLUSHABLE = """
import sys
from visiongate.kernel._exit import returned, skip_teardown
skip_teardown()
class Full:
    def write(self, text):
        return len(text)
    def flush(self):
        raise OSError(28, "No space left on device")
class Kept:
    def __del__(self):
        sys.__stderr__.write("torn down\\n")
KEPT = Kept()
sys.stdout = Full()
returned(0)
"""


def test_an_output_that_cannot_be_flushed_still_fails_as_python_says() -> None:
    """A standard output whose last flush fails (a full disk): the fast exit steps aside, and
    Python reports it, tears down and exits 120, as it did before the fast exit."""
    done = subprocess.run(
        [sys.executable, "-c", _UNFLUSHABLE], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 120, done.stderr
    assert "No space left on device" in done.stderr and done.stderr.endswith("torn down\n")
