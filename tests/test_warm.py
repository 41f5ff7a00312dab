"""The warm test servers (`_warm`): a stand-in is the server it stands for, over its own
streams, and starts, ends and dies as that server would (issue 38)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import _warm
import pytest
from _proxy_helpers import INITIALIZE
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
    )
