"""The MCP client against hostile raw JSON-RPC servers over stdio (`_hostile_rpc.py`).

Every hang ends at its timeout with a clear error, every malformed answer is one line naming
the server and the field, and the server process (with its children) is gone afterwards.
Elapsed-time bounds here are hang guards, far above the timeouts, not speed goals.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from mcp import MCPError

from visiongate.adapters import call_mcp_tool
from visiongate.adapters.mcp._session import McpLimits, ServerError, open_session
from visiongate.adapters.mcp._stdio import MessageTooLarge

pytestmark = pytest.mark.anyio

HOSTILE = str(Path(__file__).parent / "_hostile_rpc.py")
TAG_RANGE = range(0xE0000, 0xE0080)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server(mode: str, pidfile: Path | None = None, size: int = 0) -> list[str]:
    return [sys.executable, HOSTILE, mode, str(pidfile) if pidfile else "-", str(size)]


def pids_in(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()]


def gone(pid: int, within: float = 3.0) -> bool:
    """Whether `pid` is no longer running (a child reaped by init counts as gone)."""
    ends = time.monotonic() + within
    while time.monotonic() < ends:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if _is_zombie(pid):
            return True
        time.sleep(0.05)
    return False


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


async def timed_out(mode: str, tmp_path: Path, **limits: float) -> tuple[str, float, list[int]]:
    pidfile = tmp_path / f"{mode}.pid"
    started = time.monotonic()
    with pytest.raises(TimeoutError) as caught:
        await call_mcp_tool(server(mode, pidfile), "x", **limits)  # type: ignore[arg-type]
    return str(caught.value), time.monotonic() - started, pids_in(pidfile)


@pytest.mark.parametrize(("mode", "method"), [
    ("silent", "initialize"),
    ("wrong-id", "initialize"),
    ("hang-call", "tools/call"),
    ("wrong-id-call", "tools/call"),
    ("hang-list", "tools/list"),
])  # fmt: skip
async def test_each_hang_ends_at_its_timeout_and_stops_the_server(
    mode: str, method: str, tmp_path: Path
) -> None:
    # Regression (issue 13): each of these hung `mcp call` until it was killed.
    message, elapsed, pids = await timed_out(mode, tmp_path, timeout=1.0)
    assert message.startswith("the MCP server `")
    assert f"did not answer `{method}` within 1s; the server was stopped" in message
    assert elapsed < 15
    assert all(gone(pid) for pid in pids)


async def test_connect_timeout_bounds_the_handshake_only(tmp_path: Path) -> None:
    message, _, _ = await timed_out("silent", tmp_path, timeout=30.0, connect_timeout=0.5)
    assert "did not answer `initialize` within 0.5s" in message


async def test_a_server_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    _, elapsed, pids = await timed_out("ignore-term", tmp_path, timeout=0.5)
    assert all(gone(pid) for pid in pids)
    assert elapsed < 15


async def test_a_server_s_own_children_are_stopped_with_it(tmp_path: Path) -> None:
    _, _, pids = await timed_out("spawn-child", tmp_path, timeout=0.5)
    assert len(pids) == 2
    assert all(gone(pid) for pid in pids)


async def test_stray_lines_are_named_when_a_request_then_times_out(tmp_path: Path) -> None:
    message, _, _ = await timed_out("stray-lines", tmp_path, timeout=1.0)
    assert "it wrote 3 line(s) that are not JSON-RPC messages, the first: `starting up...`" in (
        message
    )


@pytest.mark.parametrize(("mode", "field", "problem"), [
    ("not-a-list", "content", "input should be a valid list"),
    ("wrong-type", "content.0.TextContent.text", "input should be a valid string"),
])  # fmt: skip
async def test_a_malformed_result_is_one_line_naming_server_and_field(
    mode: str, field: str, problem: str
) -> None:
    # Regression (issue 13): a pydantic traceback with exit 1.
    with pytest.raises(ValueError) as caught:
        await call_mcp_tool(server(mode), "x", timeout=10)
    message = str(caught.value)
    assert message.startswith("the MCP server `")
    assert "_hostile_rpc.py" in message
    assert "sent a malformed `tools/call` result" in message
    assert f"`{field}`" in message and problem in message
    assert "\n" not in message


async def test_a_json_rpc_error_is_sanitized_and_marked() -> None:
    # Regression (issues 12 and 13): the message reached the terminal with its TAG payload
    # and a `\nMEDIA:/etc/passwd` line intact.
    with pytest.raises(MCPError) as caught:
        await call_mcp_tool(server("error"), "x", timeout=10)
    error = caught.value
    assert isinstance(error, ServerError)
    assert error.code == -32603 and error.method == "tools/call"
    text = str(error) + error.message + repr(error.data)
    assert not any(ord(char) in TAG_RANGE for char in text)
    assert len(str(error).splitlines()) == 1
    assert "MEDIA:/etc/passwd" in error.message
    assert "[unverified] MEDIA:/etc/passwd" in error.message
    assert error.message.count("[unverified] MEDIA:") == error.message.count("MEDIA:")
    assert error.data == {"detail": "x"}


async def test_a_message_over_the_limit_is_refused_with_a_clear_error() -> None:
    limit = 1024 * 1024
    started = time.monotonic()
    with pytest.raises(MessageTooLarge) as caught:
        await call_mcp_tool(server("huge", size=8 * limit), "x", max_message_bytes=limit)
    assert f"sent a message of more than {limit} bytes" in str(caught.value)
    assert "`--max-message-bytes`" in str(caught.value)
    assert time.monotonic() - started < 30


async def test_a_large_message_under_the_limit_is_read_whole() -> None:
    size = 24 * 1024 * 1024
    result = await call_mcp_tool(server("huge", size=size), "x", max_message_bytes=size + 4096)
    assert len(result.content[0].text) == size  # type: ignore[union-attr]


async def test_server_stderr_is_relayed_cleaned(capsys: pytest.CaptureFixture[str]) -> None:
    limits = McpLimits.of(timeout=10)
    async with open_session(server("noisy"), limits=limits, errlog=sys.stderr) as session:
        await session.call_tool("x", {})
    err = capsys.readouterr().err
    assert "log" in err and "red" in err
    assert not any(ord(char) in TAG_RANGE for char in err)
    assert "\x1b" not in err
    assert "[unverified] MEDIA:/etc/passwd" in err


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="`request_timeout` must be above 0"):
        McpLimits(request_timeout=0)
    with pytest.raises(ValueError, match="`max_message_bytes` must be at least 1024"):
        McpLimits(max_message_bytes=10)
    with pytest.raises(ValueError, match="`connect_timeout` must be above 0"):
        McpLimits.of(timeout=0)
    assert McpLimits.of(timeout=5) == McpLimits(5, 5)
    assert McpLimits.of(timeout=5, connect_timeout=1).connect_timeout == 1
