"""`visiongate mcp call` as a real subprocess against hostile servers: bounded, one-line
errors with exit 2, and Ctrl-C or SIGTERM stop the call and the server alike."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_mcp_client_limits import HOSTILE, TAG_RANGE, gone, pids_in

TARGET = ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--tool", "x"]


def cli(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "visiongate", "mcp", "call", *TARGET, *arguments]


def environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "VISIONGATE_CACHE_DIR": str(tmp_path / "cache")}


def run(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli(*arguments),
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(tmp_path),
        check=False,
    )


def hostile(mode: str, pidfile: Path | None = None) -> list[str]:
    return ["--", sys.executable, HOSTILE, mode, str(pidfile) if pidfile else "-"]


def assert_one_line_error(completed: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith(f"visiongate mcp call: error: the MCP server `python {HOSTILE}")
    for part in parts:
        assert part in lines[0]


def test_a_hung_call_times_out_with_exit_2_and_no_server_left(tmp_path: Path) -> None:
    pidfile = tmp_path / "server.pid"
    completed = run(tmp_path, "--timeout", "1", *hostile("hang-call", pidfile))
    assert_one_line_error(completed, "did not answer `tools/call` within 1s")
    assert all(gone(pid) for pid in pids_in(pidfile))


def test_a_malformed_result_is_exit_2_naming_the_field(tmp_path: Path) -> None:
    completed = run(tmp_path, *hostile("not-a-list"))
    assert_one_line_error(completed, "sent a malformed `tools/call` result: field `content`")


def test_a_json_rpc_error_is_printed_cleaned_on_one_line(tmp_path: Path) -> None:
    # Regression (issue 13): `the MCP server failed: failed` + an invisible payload.
    completed = run(tmp_path, *hostile("error"))
    assert_one_line_error(completed, "answered `tools/call` with error -32603: failed")
    assert not any(ord(char) in TAG_RANGE for char in completed.stderr)
    assert "[unverified] MEDIA:/etc/passwd" in completed.stderr


def test_a_message_over_the_limit_is_exit_2(tmp_path: Path) -> None:
    arguments = ["--max-message-bytes", "100000", "--", sys.executable, HOSTILE, "huge", "-"]
    completed = run(tmp_path, *arguments, "2000000")
    assert_one_line_error(completed, "sent a message of more than 100000 bytes")


def test_a_bad_timeout_is_a_usage_error(tmp_path: Path) -> None:
    completed = run(tmp_path, "--timeout", "0", *hostile("hang-call"))
    assert completed.returncode == 2
    assert "`0` must be above 0 seconds" in completed.stderr


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_hung_call_and_its_server(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    # Regression (issue 13): Ctrl-C did not stop a hung call; SIGTERM orphaned the server.
    pidfile = tmp_path / "server.pid"
    process = subprocess.Popen(
        cli(*hostile("hang-call", pidfile)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
    )
    try:
        _wait_for(pidfile)
        _wait_for(pidfile.with_name(pidfile.name + ".calls"))  # the client is in `tools/call`
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == code, err
    assert f"stopped by {signum.name}; the server was stopped" in err
    assert "Traceback" not in err
    assert all(gone(pid) for pid in pids_in(pidfile))


def _wait_for(path: Path, within: float = 30.0) -> None:
    ends = time.monotonic() + within
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < ends, f"{path} never appeared"
        time.sleep(0.05)
