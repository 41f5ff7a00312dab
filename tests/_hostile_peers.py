"""What the hostile-peer tests of `visiongate proxy` share (issues 26 and 36): a live proxy in
front of the hostile server (`_hostile_proxy.py`) with a call in flight, and the checks that
nothing was answered twice, printed as a traceback or left running.

`test_proxy_hostile_peers.py` (hostile messages), `test_proxy_policy_path.py` (the watched
policy path), `test_proxy_signals.py` (signals and kills) and `test_proxy_ctrl_c.py` (Ctrl-C at
any moment) were one file; cut in four, their processes run on four workers side by side.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from _proxy_helpers import HOSTILE, RawClient, proxy_argv

SERVER = [sys.executable, HOSTILE]
SLOW_ID = 900


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
    said = log.read_bytes().strip()
    if (
        code in (1, -signal.SIGINT)
        and said.endswith(b"KeyboardInterrupt")
        and b"_entry.py" not in said
    ):
        # Python's own handler, while `site` or runpy loaded, before a line of ours ran
        # (`_entry.run` is on the stack of everything after). Python ends with status 1, or
        # by SIGINT itself once it printed the traceback (seen in `visiongate/__init__`'s
        # import under six workers).
        assert not pid_file.exists()
        return True
    if code != -signal.SIGINT:
        return False
    assert not pid_file.exists() and not said, (code, pid_file.exists(), said[-2000:])
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


async def answered(client: RawClient, request_id: Any) -> dict[str, Any]:
    """The answer to `request_id`, whether or not it came while another answer was awaited."""
    for message in map(json.loads, client.lines):
        if message.get("id") == request_id and "method" not in message:
            return dict(message)
    return await client.answer(request_id)


async def the_slow_call_is_answered_once(client: RawClient) -> None:
    answer = await answered(client, SLOW_ID)
    assert answer["result"]["content"][0]["text"].startswith("slept")
    assert "result" in await client.request("ping")
    assert ids_answered(client).count(SLOW_ID) == 1


def marked(marker: str) -> list[int]:
    """The live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or gone
            continue
        if marker.encode() in command and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def lost_by_python(said: str) -> bool:
    """Python itself dropped a Ctrl-C before visiongate took the signals over (`_entry`'s first
    lines: from then on a SIGINT is noted, not raised, and the exception our own raising
    handler throws is `_Signalled`, which its unraisable hook keeps quiet, so neither report
    below can come later). Two routes, each told by what Python prints:

    - `site`, running a `.pth` file's import line (an editable install's finder imports
      `pathlib`, so `ipaddress`): on 3.11 the KeyboardInterrupt comes out of a class body
      wrapped in `RuntimeError("Error calling __set_name__ ...")`, which `site` catches as it
      catches any error of a `.pth` line, prints ("Error processing line 1 of ...pth",
      "Remainder of file ignored") and goes on; the venv's `lib64` link makes it read the file
      twice, and the second reading installs the finder. 1 start in 400 with a Ctrl-C in its
      first 0.4 s beside two CPU hogs; once in `.ci/run`. 3.12 no longer wraps it (the start
      then dies as `died_starting` says).
    - an import's module-lock callback, where Python prints "Exception ignored in:
      <function _get_module_lock.<locals>.cb ...>" and the KeyboardInterrupt, and drops it
      (1 `mcp call` in 300 signalled in its first 0.12 s beside two CPU hogs).
    """
    blocks = [
        part.split("Remainder of file ignored")[0]
        for part in said.split("Error processing line")[1:]
    ]
    if any("KeyboardInterrupt" in block and "_entry.py" not in block for block in blocks):
        return True
    for part in said.split("Exception ignored in")[1:]:
        # The exception's line: the first after the report's own that is not its traceback.
        lines = part.splitlines()[1:]
        ending = next((line for line in lines if not line.startswith((" ", "Traceback"))), "")
        if ending.rstrip(": ") == "KeyboardInterrupt":
            return True
    return False


async def ended(
    process: asyncio.subprocess.Process, log: Path, *, python_may_lose: bool = False
) -> int | None:
    """The exit code, or a failure that shows the log: a signal the proxy (or `mcp call`) lost,
    not a timeout.

    With `python_may_lose` (a Ctrl-C that may have come while Python started), None when
    Python lost it before visiongate had the signals (`lost_by_python`): the command is then
    sent SIGTERM, a client's next step, and must end by it (143, or killed by it while still
    starting)."""
    waiting = asyncio.ensure_future(process.wait())
    deadline = time.monotonic() + 30
    while not waiting.done() and time.monotonic() < deadline:
        await asyncio.wait({waiting}, timeout=0.25)
        said = log.read_text(errors="replace") if python_may_lose else ""
        if not waiting.done() and lost_by_python(said):
            process.terminate()
            code = await asyncio.wait_for(waiting, 30)
            assert code in (128 + signal.SIGTERM, -signal.SIGTERM), (code, said)
            return None
    if waiting.done():
        return waiting.result()
    waiting.cancel()
    try:  # the signal masks, where /proc tells them
        status = Path(f"/proc/{process.pid}/status").read_text().splitlines()
    except OSError:
        status = []
    masks = "\n".join(line for line in status if line.startswith(("Sig", "ShdPnd")))
    process.send_signal(signal.SIGABRT)  # the stacks, into the log (PYTHONFAULTHANDLER)
    try:
        await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        process.kill()
        await process.wait()
    said = log.read_text(errors="replace")
    pytest.fail(f"the proxy ran on 30 s after the signal:\n{masks}\n{said}")


def wait_for(check: Any, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(check())
