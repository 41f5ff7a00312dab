"""`visiongate proxy` under hostile peers, slow files and signals (issue 26).

Each case runs through one live proxy with another request in flight (a `slow` call of the
hostile server, `_hostile_proxy.py`): the hostile message from either side is answered under
its own id or not at all, the request in flight is answered exactly once, the session lives
on, nothing is printed as a traceback, and no process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import HOSTILE, RawClient, proxy_argv

pytestmark = pytest.mark.anyio
SERVER = [sys.executable, HOSTILE]
SLOW_ID = 900
NESTED = 100_000
BIG = 70_000_000


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# -- helpers ------------------------------------------------------------------------------


def ids_answered(client: RawClient) -> list[Any]:
    return [m.get("id") for m in map(json.loads, client.lines) if "method" not in m]


def no_traceback(home: Path) -> None:
    log = (home / "proxy.log").read_text(errors="replace")
    assert "Traceback" not in log and "Error:" not in log.replace("error:", ""), log[-2000:]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie waiting for a reaper is gone all but in name


def all_gone(pids: list[int], within: float = 8.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)


def read_pids(path: Path, within: float = 10.0) -> list[int]:
    deadline = time.monotonic() + within
    while not path.exists() or not path.read_text().endswith("\n"):
        assert time.monotonic() < deadline, "the server never started"
        time.sleep(0.02)
    return [int(word) for word in path.read_text().split()]


def died_starting(code: int | None, pid_file: Path, log: Path) -> bool:
    """A Ctrl-C that came while the interpreter itself was starting, before Python has a
    handler for it, kills the process as the signal's default does: silently, with nothing
    started (a loaded machine can take that long to start Python)."""
    if code != -signal.SIGINT:
        return False
    assert not pid_file.exists() and not log.read_bytes().strip()
    return True


@asynccontextmanager
async def session(home: Path, *options: str, mode: str = "normal") -> AsyncIterator[RawClient]:
    """An initialized raw session, with a 2 s call in flight under `SLOW_ID`."""
    client = await RawClient.start(proxy_argv([*SERVER, mode], *options), home)
    await client.initialize()
    slow = {"name": "slow", "arguments": {"seconds": 2}}
    await client.send({"jsonrpc": "2.0", "id": SLOW_ID, "method": "tools/call", "params": slow})
    try:
        yield client
    finally:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()


async def the_slow_call_is_answered_once(client: RawClient) -> None:
    answer = await client.answer(SLOW_ID)
    assert answer["result"]["content"][0]["text"].startswith("slept")
    assert "result" in await client.request("ping")
    assert ids_answered(client).count(SLOW_ID) == 1


# -- the client's side ----------------------------------------------------------------------


CLIENT_LINES = {
    "nested 100,000 deep": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": '
        + b"[" * NESTED
        + b"]" * NESTED
        + b'}, "id": 41}',
        41,
        -32600,
    ),
    "70 MB with a nested id before the real one": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": {"id": 777, '
        b'"blob": "' + b"A" * BIG + b'"}}, "id": 778}',
        778,
        -32600,
    ),
    "invalid UTF-8": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "caf\xe9"}, "id": 43}',
        43,
        -32700,
    ),
}


@pytest.mark.parametrize("case", CLIENT_LINES)
async def test_a_hostile_client_line_is_answered_under_its_own_id(
    case: str, tmp_path: Path
) -> None:
    line, request_id, code = CLIENT_LINES[case]
    async with session(tmp_path) as client:
        await client.send_line(line)
        answer = await client.answer(request_id)
        assert answer["error"]["code"] == code, answer
        await the_slow_call_is_answered_once(client)
        assert 777 not in ids_answered(client)  # never the id nested in params
        assert await client.close() == 0
    no_traceback(tmp_path)


# -- the server's side ----------------------------------------------------------------------


SERVER_ANSWERS = {
    "nested 100,000 deep": ("deep", {}, "malformed"),
    "70 MB with the id of the call in flight nested before its own": (
        "huge",
        {"other": SLOW_ID},
        "over the proxy's limit",
    ),
    "invalid UTF-8": ("bad_utf8", {}, "malformed"),
}


@pytest.mark.parametrize("case", SERVER_ANSWERS)
async def test_a_hostile_server_answer_fails_its_own_call_only(case: str, tmp_path: Path) -> None:
    tool, arguments, said = SERVER_ANSWERS[case]
    async with session(tmp_path) as client:
        answer = await client.request("tools/call", {"name": tool, "arguments": arguments})
        assert answer["error"]["code"] == -32603 and said in answer["error"]["message"], answer
        await the_slow_call_is_answered_once(client)
        assert await client.close() == 0
    no_traceback(tmp_path)


# -- the policy path ------------------------------------------------------------------------


def fifo(path: Path) -> None:
    temporary = path.with_name("fifo.tmp")
    os.mkfifo(temporary)
    os.replace(temporary, path)


def dev_zero(path: Path) -> None:
    temporary = path.with_name("zero.tmp")
    temporary.symlink_to("/dev/zero")
    os.replace(temporary, path)


@pytest.mark.parametrize("replace", [fifo, dev_zero], ids=["a FIFO", "a /dev/zero link"])
async def test_a_policy_path_that_is_no_file_never_freezes_the_session(
    replace: Any, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text((Path(__file__).parent.parent / "policies" / "default.yaml").read_text())
    async with session(tmp_path, "--policy", str(policy), "--timeout", "5") as client:
        replace(policy)
        started = time.monotonic()
        call = await client.request(
            "tools/call", {"name": "slow", "arguments": {"seconds": 0}}, timeout=10
        )
        assert "result" in call, call
        assert "result" in await client.request("ping", timeout=10)
        await the_slow_call_is_answered_once(client)
        assert time.monotonic() - started < 5
        closing = time.monotonic()
        assert await client.close() == 0  # end of input still ends the session
        assert time.monotonic() - closing < 5
    log = (tmp_path / "proxy.log").read_text()
    assert "not a regular file" in log
    no_traceback(tmp_path)


# -- processes killed -----------------------------------------------------------------------


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the `stubborn` server writes its pid and its child's."""
    path = tmp_path / "pids"
    monkeypatch.setenv("HOSTILE_PIDS", str(path))
    return path


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


@pytest.mark.parametrize("after", [0.1, 0.5, 1.0, 3.0])
async def test_ctrl_c_at_any_moment_ends_with_one_line_and_no_server(
    after: float, tmp_path: Path, pid_file: Path
) -> None:
    client = await RawClient.start(proxy_argv([*SERVER, "stubborn"]), tmp_path)
    await client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    slow = {"name": "slow", "arguments": {"seconds": 30}}
    await client.send({"jsonrpc": "2.0", "id": SLOW_ID, "method": "tools/call", "params": slow})
    await asyncio.sleep(after)
    client.process.send_signal(signal.SIGINT)
    code = await _ended(client.process, tmp_path / "proxy.log")
    if died_starting(code, pid_file, tmp_path / "proxy.log"):
        return
    assert code == 130
    assert client.process.stdout is not None
    answered = [json.loads(line) for line in (await client.process.stdout.read()).splitlines()]
    assert all(ids.count(i) <= 1 for ids in [[m.get("id") for m in answered]] for i in ids)
    log = (tmp_path / "proxy.log").read_text(errors="replace")
    mine = [line for line in log.splitlines() if line.startswith("visiongate")]
    said = (  # the second before the command line has loaded, and so before any server
        "visiongate: stopped by SIGINT",
        "visiongate proxy: stopped by SIGINT; the server was stopped",
    )
    assert len(mine) == 1 and mine[0] in said, log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
    if pid_file.exists():
        assert all_gone(read_pids(pid_file))


@pytest.mark.parametrize("after", [0.1, 0.5, 1.0, 3.0])
async def test_ctrl_c_during_mcp_call_ends_with_one_line_and_no_server(
    after: float, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    rpc = str(Path(__file__).parent / "_hostile_rpc.py")
    argv = [
        sys.executable, "-m", "visiongate", "mcp", "call", "--provider", "anthropic",
        "--model", "claude-sonnet-4-5", "--tool", "x", "--",
        sys.executable, rpc, "ignore-term", str(pids),
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await asyncio.sleep(after)
    process.send_signal(signal.SIGINT)
    try:
        _, err = await asyncio.wait_for(process.communicate(), 30)
    except TimeoutError:
        process.kill()
        _, err = await process.communicate()
        pytest.fail(f"`mcp call` ran on 30 s after SIGINT at {after} s:\n{err.decode()}")
    (tmp_path / "mcp.log").write_bytes(err)
    if died_starting(process.returncode, pids, tmp_path / "mcp.log"):
        return
    # Regression: a Ctrl-C while `mcp call` imported the SDK was swallowed by a library's
    # `except:` and the call ran on to its timeout (exit 2).
    assert process.returncode == 130
    said = err.decode(errors="replace")
    assert "Traceback" not in said and "Event loop is closed" not in said, said
    assert said.strip() in (
        "visiongate: stopped by SIGINT",
        "visiongate mcp call: stopped by SIGINT; the server was stopped",
    ), said
    if pids.exists() and pids.read_text().strip():
        assert all_gone([int(word) for word in pids.read_text().split()])


async def _ended(process: asyncio.subprocess.Process, log: Path) -> int:
    """The exit code, or a failure that shows the log: a signal the proxy lost, not a timeout."""
    try:
        return await asyncio.wait_for(process.wait(), 30)
    except TimeoutError:
        process.kill()
        await process.wait()
        pytest.fail(f"the proxy ran on 30 s after SIGINT:\n{log.read_text(errors='replace')}")
