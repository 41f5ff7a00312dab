"""Every command, run as a real process, against a closed stdout, a reader that goes away and
outputs it cannot write: one line and exit 2, or a quiet end, never a traceback (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_helpers import FACTS, POLICIES, ROOT, TARGET, environment, no_traceback, run_process
from _warm import server_command

from visiongate.adapters.mcp.example_server import screenshot_png
from visiongate.cli import main
from visiongate.engine import Gate


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "screen.png").write_bytes(screenshot_png())
    trace = folder / "trace.jsonl"
    gate = Gate.load(trace=trace, routes=False)
    for model in ("claude-sonnet-4-5", "gpt-4o", "deepseek-chat"):
        gate.decide("anthropic", model)
    return {"png": folder / "screen.png", "trace": trace, "cache": folder / "cache"}


def command_lines(inputs: dict[str, Path]) -> dict[str, list[str]]:
    """One ordinary call of every command that writes to standard output."""
    route = ["--source", "computer_use", "--image", str(inputs["png"]), *TARGET]
    return {
        "version": ["version"],
        "decide": ["decide", "--facts", FACTS],
        "explain": ["explain"],
        "lint": ["lint", str(POLICIES / "default.yaml")],
        "fmt": ["fmt", "--check", str(POLICIES / "default.yaml")],
        "test": ["test", str(POLICIES / "examples" / "never-pixels.test.yaml")],
        "docs": ["docs", "--check"],
        "diff": ["diff", "default", "examples/never-pixels"],
        "rule": ["rule", "gap"],
        "audit": ["audit", str(inputs["trace"])],
        "route": ["route", *route, "--cache-dir", str(inputs["cache"])],
        "registry": ["registry", "show", "openrouter"],
        "routes": ["routes", "list"],
        "mcp": ["mcp", "call", *TARGET, "--tool", "screenshot", "--", *server_command()],
        # With its input at an end, the proxy starts the server and ends the session (0).
        "proxy": ["proxy", *TARGET, "--", *server_command()],
    }


NAMES = list(command_lines({"png": Path(), "trace": Path(), "cache": Path()}))


@pytest.mark.parametrize("name", [*NAMES, "demo"])
def test_a_closed_stdout_is_one_line_and_exit_2_for_every_command(
    name: str, inputs: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    argv = command_lines(inputs).get(name, ["demo", "--out", str(tmp_path / "demo")])
    done = subprocess.run(
        [sys.executable, "-m", "visiongate", *argv],
        cwd=ROOT,
        env=environment(home),
        capture_output=False,
        stdout=None,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,  # `proxy` reads its client there: no client, no session
        preexec_fn=lambda: os.close(1),  # standard output closed before the command starts
    )
    assert done.returncode == 2, done.stderr
    assert "cannot write the output: standard output is closed" in done.stderr
    assert no_traceback(done.stderr)


def _without_reader(argv: list[str], home: Path) -> tuple[int, str]:
    """Run with a standard output whose reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "visiongate", *argv],
            cwd=ROOT,
            env=environment(home),
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(write_end)
    _out, err = process.communicate(timeout=120)
    return process.returncode, err


@pytest.mark.parametrize("name", NAMES)
def test_a_reader_that_goes_away_ends_every_command_quietly(
    name: str, inputs: dict[str, Path], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = command_lines(inputs)[name]
    # The command's verdict with its output read: `main` in this process says it as a process
    # would (the exit-code matrix runs these calls in-process too); the case under test, the
    # reader gone, stays a real process.
    expected = main(argv)
    capsys.readouterr()
    code, err = _without_reader(argv, home)
    assert code == expected, err  # the command's own verdict, as if the output had been read
    assert no_traceback(err) and "BrokenPipe" not in err, err


@pytest.mark.parametrize(
    "argv",
    [["explain"], ["test", "-v", str(POLICIES)], ["diff", "default", "examples/never-pixels"]],
)
def test_piped_to_head_dash_1(argv: list[str], home: Path) -> None:
    """`visiongate explain | head -1`: the reader takes one line and leaves."""
    process = subprocess.Popen(
        [sys.executable, "-m", "visiongate", *argv],
        cwd=ROOT,
        env=environment(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()
    with process.stderr:
        err = process.stderr.read().decode()
    process.wait(timeout=120)
    assert first.strip()
    assert process.returncode in (0, 1), err
    assert no_traceback(err) and "BrokenPipe" not in err, err


def unwritable_outputs(inputs: dict[str, Path], where: Path) -> Iterator[tuple[str, list[str]]]:
    """(what, argv) for every output a command writes to a path it is given."""
    folder = where / "a-folder"
    folder.mkdir(exist_ok=True)
    a_file = where / "a-file.txt"
    a_file.write_text("in the way\n")
    missing = where / "no-such-folder" / "x.out"
    route = ["--source", "computer_use", "--image", str(inputs["png"]), *TARGET]
    default = str(POLICIES / "default.yaml")
    for target in (folder, missing):
        yield "lint --output", ["lint", default, "--format", "sarif", "--output", str(target)]
        yield "route --out", ["route", *route, "--out", str(target)]
    yield "docs --out", ["docs", "--out", str(a_file)]
    yield "demo --out", ["demo", "--out", str(a_file)]
    yield "demo --out /proc", ["demo", "--out", "/proc/visiongate-demo"]


def test_unwritable_outputs_are_one_line_and_exit_2(
    inputs: dict[str, Path], home: Path, tmp_path: Path
) -> None:
    for what, argv in unwritable_outputs(inputs, tmp_path):
        done = run_process(argv, home)
        assert done.returncode == 2, (what, done.stderr)
        assert no_traceback(done.stdout, done.stderr), (what, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and ": error: " in lines[0], (what, done.stderr)


def test_fmt_of_a_read_only_file_is_one_line_and_exit_2(home: Path, tmp_path: Path) -> None:
    policy = tmp_path / "messy.yaml"
    policy.write_text((POLICIES / "default.yaml").read_text().replace("version: ", "version:  "))
    policy.chmod(0o444)
    done = run_process(["fmt", str(policy)], home)
    if os.access(policy, os.W_OK):
        pytest.skip("running as a user who can write read-only files")
    assert done.returncode == 2 and "cannot write" in done.stderr, done.stderr
    assert no_traceback(done.stderr)
