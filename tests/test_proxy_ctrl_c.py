"""Ctrl-C at any moment of `visiongate proxy` and `visiongate mcp call` (issue 36): one line,
exit 130, no traceback and no server left running.

Each case runs through a live proxy in front of the hostile server (`_hostile_peers.py`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _hostile_peers import (
    SERVER,
    SLOW_ID,
    all_gone,
    died_starting,
    ended,
    read_pids,
)
from _proxy_helpers import RawClient, proxy_argv

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


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
    code = await ended(client.process, tmp_path / "proxy.log", python_may_lose=True)
    if code is None:  # Python lost the Ctrl-C (`lost_by_python`); SIGTERM ended it
        assert not pid_file.exists() or all_gone(read_pids(pid_file))
        return
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
    log = tmp_path / "mcp.log"
    with log.open("wb") as stderr:  # a file, not a pipe: read whole even after a timeout
        process = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=stderr
        )
    await asyncio.sleep(after)
    process.send_signal(signal.SIGINT)
    if await ended(process, log, python_may_lose=True) is None:
        # Python lost the Ctrl-C before a line of ours ran (`lost_by_python`); SIGTERM ended it
        assert not pids.exists() or all_gone([int(word) for word in pids.read_text().split()])
        return
    err = log.read_bytes()
    if died_starting(process.returncode, pids, log):
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


_LANDING_IN_PYDANTIC_CORE = """
import signal
import sys

import pydantic.plugin._schema_validator as building
from pydantic_core import core_schema

real = building.SchemaValidator


class Landing:
    def __repr__(self):  # pydantic-core takes a literal's repr as it builds its validator
        signal.raise_signal(signal.SIGINT)
        return "Landing()"


def landing(schema, *args, **kwargs):
    if "mcp" in sys.modules and not getattr(landing, "done", False):  # the SDK's first model
        landing.done = True
        real(core_schema.literal_schema([Landing()]))  # raises pydantic-core's SchemaError
    return real(schema, *args, **kwargs)


building.SchemaValidator = landing
from visiongate._entry import run
raise SystemExit(run())
"""


def test_ctrl_c_inside_pydantic_core_as_the_sdk_loads_is_one_line_and_130() -> None:
    """Regression: a Ctrl-C 1 s into `mcp call` landed inside pydantic-core as it built the MCP
    SDK's models; pydantic-core reports it as its own `SchemaError`, with no chain back to
    the signal, and the command printed that traceback and exited 1 (this file's
    `[1.0]` case, once in a whole-suite run). Here a real `mcp call` imports the real SDK
    and the signal lands inside pydantic-core as the SDK's first model is built."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    target = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
    argv = ["mcp", "call", *target, "--tool", "x", "--", *sleeper]
    ended = subprocess.run(
        [sys.executable, "-c", _LANDING_IN_PYDANTIC_CORE, *argv],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (ended.returncode, ended.stdout) == (130, ""), ended.stderr
    assert ended.stderr == "visiongate mcp call: stopped by SIGINT; the server was stopped\n"
