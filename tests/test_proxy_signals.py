"""`visiongate proxy` killed, or signalled while its server starts (issue 36): one line said,
no server left running.

Each case runs through a live proxy in front of the hostile server (`_hostile_peers.py`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _hostile_peers import (
    SERVER,
    SLOW_ID,
    all_gone,
    died_starting,
    ended,
    ids_answered,
    lost_by_python,
    marked,
    no_traceback,
    read_pids,
    session,
    wait_for,
)
from _leftovers import VARIABLE, left_running, stop_leftovers
from _proxy_helpers import RawClient, proxy_argv

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# What Python wrote when it dropped a Ctrl-C (two real logs, 2026-12-03, trimmed), and what it
# or visiongate writes when nothing was dropped.
_DROPPED_BY_SITE = """\
Error processing line 1 of /v/site-packages/__editable__.visiongate-0.1.0.pth:

  Traceback (most recent call last):
    File "/py/lib/python3.11/functools.py", line 972, in __set_name__
      def __set_name__(self, owner, name):

  KeyboardInterrupt

  The above exception was the direct cause of the following exception:

  Traceback (most recent call last):
    File "<frozen site>", line 186, in addpackage
    File "/py/lib/python3.11/ipaddress.py", line 1393, in <module>
      class IPv4Interface(IPv4Address):
  RuntimeError: Error calling __set_name__ on 'cached_property' instance 'hostmask' in 'IPv4Int...'

Remainder of file ignored
"""
_DROPPED_IN_A_LOCK_CALLBACK = """\
Exception ignored in: <function _get_module_lock.<locals>.cb at 0x7f0d181989a0>
Traceback (most recent call last):
  File "<frozen importlib._bootstrap>", line 204, in cb
KeyboardInterrupt:\x20
"""
_NOT_DROPPED = {
    "our own handler's, kept quiet by its hook": _DROPPED_IN_A_LOCK_CALLBACK.replace(
        "KeyboardInterrupt: ", "visiongate.cli._signals._Signalled: 2"
    ),
    "another error of a .pth line": _DROPPED_BY_SITE.replace("KeyboardInterrupt", "OSError"),
    "a start that died of it, after `_entry`": _DROPPED_BY_SITE.replace(
        "<frozen site>", "/v/visiongate/_entry.py"
    ),
    "the command's one line": "visiongate proxy: stopped by SIGINT; the server was stopped\n",
}


@pytest.mark.parametrize("said", [_DROPPED_BY_SITE, _DROPPED_IN_A_LOCK_CALLBACK])
def test_a_ctrl_c_python_dropped_is_told_from_its_log(said: str) -> None:
    assert lost_by_python(said)
    assert lost_by_python(f"visiongate: a notice\n{said}visiongate proxy: stopped by SIGTERM\n")


@pytest.mark.parametrize("said", list(_NOT_DROPPED.values()), ids=list(_NOT_DROPPED))
def test_nothing_else_is_taken_for_a_dropped_ctrl_c(said: str) -> None:
    assert not lost_by_python(said)


# -- processes killed -----------------------------------------------------------------------


async def test_a_server_killed_mid_call_fails_what_is_in_flight_and_leaves_nothing(
    tmp_path: Path, pid_file: Path
) -> None:
    async with session(tmp_path, mode="stubborn") as client:
        server, child = read_pids(pid_file)
        os.kill(server, signal.SIGKILL)
        answer = await client.answer(SLOW_ID)
        assert answer["error"]["code"] == -32000
        assert "exited with status -9" in answer["error"]["message"]
        assert await client.read() is None
        assert await client.close() == 2
        assert ids_answered(client).count(SLOW_ID) == 1
    assert all_gone([server, child])  # its child in the group, which ignores SIGTERM, too
    no_traceback(tmp_path)


async def test_a_proxy_killed_with_sigkill_leaves_no_server_behind(
    tmp_path: Path, pid_file: Path
) -> None:
    async with session(tmp_path, mode="stubborn") as client:
        pids = read_pids(pid_file)
        client.process.kill()  # no clean-up runs: the watchdog stops the group
        await client.process.wait()
    assert all_gone(pids)


EARLY = [round(0.04 * step, 2) for step in range(20)]


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_a_signal_while_the_server_starts_leaves_no_server(
    signum: int, tmp_path: Path
) -> None:
    """Regression (issue 36): a Ctrl-C or SIGTERM in the proxy's first few hundred ms, while
    `subprocess.Popen` started the server, left a server that ignores end of input running
    (19 of 19 trials), and the proxy said it was stopped. Found by a marker in the command
    line of the server and of its child, not by a file the server may not have written yet."""
    left: dict[float, list[int]] = {}

    async def settled(after: float, client: RawClient, home: Path, marker: str) -> None:
        may_lose = signum == signal.SIGINT  # SIGTERM has no handler of Python's to lose it
        code = await ended(client.process, home / "proxy.log", python_may_lose=may_lose)
        deadline = time.monotonic() + 3  # what was stopped is reaped
        while (found := marked(marker)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if found:
            left[after] = found
            for pid in found:
                os.kill(pid, signal.SIGKILL)
        elif code is None:  # Python lost the Ctrl-C (`lost_by_python`); SIGTERM ended it
            pass
        elif code != -signum and not died_starting(code, home / "pids", home / "proxy.log"):
            said = (home / "proxy.log").read_text(errors="replace").strip()
            assert code == 128 + signum and said.startswith("visiongate"), (after, code, said)
            assert len(said.splitlines()) == 1 and "stopped by" in said, (after, said)

    # One proxy starts at a time, so each signal lands where its delay says; the stops,
    # which wait out the server's grace periods (it ignores end of input and SIGTERM: 4 s),
    # overlap with the next trials instead of following one another.
    stopping: list[asyncio.Task[None]] = []
    for trial, after in enumerate(EARLY):
        home = tmp_path / str(trial)
        home.mkdir()
        marker = f"visiongate-test-{os.getpid()}-{signum}-{after}-{time.monotonic_ns()}"
        client = await RawClient.start(proxy_argv([*SERVER, "stubborn", marker]), home)
        await asyncio.sleep(after)
        client.process.send_signal(signum)
        stopping.append(asyncio.create_task(settled(after, client, home, marker)))
    failures = [
        outcome
        for outcome in await asyncio.gather(*stopping, return_exceptions=True)
        if isinstance(outcome, BaseException)
    ]
    if failures:
        raise failures[0]
    assert not left, f"servers left running, by the signal's delay in seconds: {left}"


async def test_a_proxy_started_with_sigint_ignored_leaves_it_ignored(tmp_path: Path) -> None:
    """Regression: started with SIGINT ignored (a shell's background job, some CI runners), the
    proxy took SIGINT over once it had loaded, so a Ctrl-C 10 ms in was dropped by the kernel
    and one 100 ms in stopped it; the test of an early Ctrl-C failed under such a runner. An
    ignored SIGINT now stays ignored at every moment; SIGTERM still stops it in one line."""
    client = await RawClient.start(proxy_argv([*SERVER, "stubborn"]), tmp_path, sigint_ignored=True)
    process = client.process
    try:
        process.send_signal(signal.SIGINT)  # while it loads
        await client.initialize()
        process.send_signal(signal.SIGINT)  # while it relays
        assert (await client.request("ping", timeout=30)).get("result") == {}
        process.send_signal(signal.SIGTERM)
        assert await ended(process, tmp_path / "proxy.log") == 128 + signal.SIGTERM
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    said = (tmp_path / "proxy.log").read_text(errors="replace").strip()
    assert said == "visiongate proxy: stopped by SIGTERM; the server was stopped", said


def test_the_session_end_check_finds_a_server_left_running(tmp_path: Path) -> None:
    """The check `conftest` runs when a session ends (`_leftovers`) sees a test server that
    outlived its proxy, by the session's token in its environment, and kills it."""
    token = f"check-{os.getpid()}-{time.monotonic_ns()}"
    rpc = str(Path(__file__).parent / "_hostile_rpc.py")
    environment = {**os.environ, VARIABLE: token}
    server = subprocess.Popen(  # detached: as a server whose proxy was killed
        [sys.executable, rpc, "ignore-term", str(tmp_path / "pids")],
        stdin=subprocess.PIPE,
        env=environment,
        start_new_session=True,
    )
    try:
        assert wait_for(lambda: server.pid in left_running(token))
        assert "_hostile_rpc.py" in left_running(token)[server.pid]
        assert list(stop_leftovers(token, grace=0.2)) == [server.pid]
        assert server.wait(timeout=10) == -signal.SIGKILL
        assert left_running(token) == {}
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        assert server.stdin is not None
        server.stdin.close()
