"""The warm test servers (`_warm`): a stand-in is the server it stands for, over its own
streams, and starts, ends and dies as that server would (issue 38)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import _warm
import pytest
from _proxy_helpers import INITIALIZE, proxy_env, warm_proxy_argv
from _warm import hostile_command, server_command

from visiongate.adapters.mcp import example_server

pytestmark = pytest.mark.skipif(not _warm.SUPPORTED, reason="warm servers are Linux's only")


def forked() -> list[int]:
    """The live children of this process's fork server."""
    parent = str(_warm._server["process"].pid)
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError, NotADirectoryError):
            continue
        if fields[1] == parent and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def started(command: list[str]) -> tuple[subprocess.Popen[bytes], dict[str, object]]:
    """`command` started, and its answer to `initialize`."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    process.stdin.flush()
    return process, json.loads(process.stdout.readline())


def stopped(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def settled(check: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(check) and check():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("command", [server_command, hostile_command])
def test_a_stand_in_is_its_server_forked_warm(command: object) -> None:
    _warm.start()
    assert callable(command)
    before = forked()
    process, answer = started(command())
    try:
        assert answer["result"]["serverInfo"]["name"] == "visiongate-example"  # type: ignore[index]
        (child,) = set(forked()) - set(before)  # the server is the fork server's child
        assert Path(f"/proc/{child}/cwd").resolve() == Path.cwd().resolve()
        assert process.stdin is not None
        process.stdin.close()  # end of input: the server ends, and so does its stand-in
        assert process.wait(timeout=20) == 0
        assert settled(lambda: child not in forked())
    finally:
        stopped(process)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_stand_in_signalled_ends_its_server_and_as_it_ended(how: str) -> None:
    """SIGTERM is passed on, and the stand-in dies of the signal its server died of; SIGKILL
    (a process group killed outright) cannot be, and the server dies with its stand-in."""
    _warm.start()
    before = forked()
    process, _ = started(server_command())
    try:
        (child,) = set(forked()) - set(before)
        process.send_signal(getattr(signal, how))
        assert process.wait(timeout=20) == -getattr(signal, how)
        assert settled(lambda: child not in forked())
    finally:
        stopped(process)


def test_without_a_fork_server_a_stand_in_execs_the_real_command(tmp_path: Path) -> None:
    real = example_server.server_command()
    command = [sys.executable, "-S", "-P", _warm.__file__, str(tmp_path / "none"), "--", *real]
    process, answer = started(command)
    try:
        assert answer["result"]["serverInfo"]["name"] == "visiongate-example"  # type: ignore[index]
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[:-1]
        assert [part.decode() for part in cmdline] == real
    finally:
        stopped(process)


def test_only_the_servers_it_holds_get_a_stand_in() -> None:
    with pytest.raises(ValueError, match="not a server the fork server holds"):
        server_command([sys.executable, "-c", "pass"])
    assert _warm._program([sys.executable, "-m", example_server.MODULE, "--x"]) == (
        "module",
        example_server.MODULE,
        ["--x"],
    )


def test_a_warm_proxy_is_the_proxy_forked_warm(tmp_path: Path) -> None:
    _warm.start()
    before = forked()
    argv = warm_proxy_argv(server_command(), "--trace", str(tmp_path / "trace.jsonl"))
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=proxy_env(tmp_path)
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert answer["result"]["serverInfo"]["name"] == "visiongate-example"
        assert len(set(forked()) - set(before)) == 2  # the proxy, and the server behind it
        process.stdin.close()
        assert process.wait(timeout=20) == 0
    finally:
        stopped(process)


def test_an_interpreter_setting_of_its_own_gets_the_real_command(tmp_path: Path) -> None:
    """`PYTHONPATH` (or any start-up setting the fork server did not start with) is read as
    the interpreter starts: a forked child could not honour it, so the real command runs."""
    _warm.start()
    command = server_command()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["result"]
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")[:-1]
        assert [part.decode() for part in cmdline] == command[command.index("--") + 1 :]
    finally:
        stopped(process)


def test_a_child_runs_the_exit_handlers_of_its_imports_before_leaving() -> None:
    """As in a real process, `skip_teardown`'s exit (registered before the program's imports)
    comes after the exit handlers those imports registered, though the fork server made them."""
    script = """
import atexit, sys
sys.path.insert(0, sys.argv[1])
import _warm_server
_warm_server._exit_handlers.append((print, ("an import's exit handler ran",), {}))
_warm_server._exit_in_order()
from visiongate.kernel._exit import returned, skip_teardown
skip_teardown()
returned(0)
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(_warm.__file__).parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "an import's exit handler ran\n"), done.stderr
