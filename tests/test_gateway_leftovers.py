"""What a killed gateway leaves on disk (its sessions' image directories) is removed by the
next gateway to start, and nothing a live session owns is: each session holds a `flock` on
its directory's `.owner`, which the kernel releases when the process dies however it dies.
The locks are held by real processes here, and the gateways are real ones SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _gateway_helpers import (
    VISION_MODEL,
    connected,
    gateway_argv,
    running,
    start_gateway,
    wait_until,
)
from _warm import server_command

from visiongate.adapters.gateway._leftovers import OWNER, UNOWNED_AFTER, claim, release, sweep

_HOLD = """
import sys, time
from pathlib import Path
from visiongate.adapters.gateway._leftovers import claim
claim(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(600)
"""


def _holder(directory: Path) -> subprocess.Popen[str]:
    """Another process holding `directory`'s owner lock, as a live session of another replica."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(directory)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_a_directory_whose_owner_died_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    dead, live = tmp_path / "sessions" / "dead", tmp_path / "sessions" / "live"
    killed, holder = _holder(dead), _holder(live)
    try:
        (dead / "0123.png").write_bytes(b"a user's picture")
        (live / "4567.png").write_bytes(b"another user's picture")
        assert sweep(tmp_path) == 0  # both owners alive: nothing is touched
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert sweep(tmp_path) == 1
        assert not dead.exists()
        assert (live / "4567.png").read_bytes() == b"another user's picture"
    finally:
        for process in (killed, holder):
            process.kill()
            process.wait()
            assert process.stdout is not None
            process.stdout.close()
    assert sweep(tmp_path) == 1 and not live.exists()


def test_this_process_own_claim_is_kept_and_released(tmp_path: Path) -> None:
    directory = tmp_path / "sessions" / "mine"
    fd = claim(directory)
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    assert oct((directory / OWNER).stat().st_mode & 0o777) == "0o600"
    assert sweep(tmp_path) == 0 and directory.exists()  # another open file: held
    release(fd)
    assert sweep(tmp_path) == 1 and not directory.exists()


def test_an_unowned_directory_waits_its_age_and_links_are_never_followed(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    fresh, old, target = sessions / "fresh", sessions / "old", tmp_path / "elsewhere"
    for directory in (fresh, old, target):
        directory.mkdir(parents=True)
        (directory / "a.png").write_bytes(b"x")
    os.utime(old, (time.time() - UNOWNED_AFTER - 5,) * 2)
    (sessions / "link").symlink_to(target, target_is_directory=True)
    owned_by_a_link = sessions / "trap"
    owned_by_a_link.mkdir()
    (owned_by_a_link / OWNER).symlink_to(target / "a.png")
    os.utime(owned_by_a_link, (time.time() - UNOWNED_AFTER - 5,) * 2)
    assert sweep(tmp_path) == 1
    assert not old.exists() and fresh.exists() and owned_by_a_link.exists()
    assert (target / "a.png").read_bytes() == b"x"  # through neither link
    assert sweep(tmp_path / "nowhere") == 0


@pytest.mark.anyio
async def test_a_killed_gateways_sessions_are_removed_by_the_next_one(tmp_path: Path) -> None:
    argv = gateway_argv(["--listen", "127.0.0.1:0"], server_command())
    sessions = tmp_path / "images" / "sessions"
    with running(argv, tmp_path, name="survivor") as survivor:
        killed = start_gateway(argv, tmp_path, name="killed")
        try:
            async with connected(killed.url, VISION_MODEL) as doomed:
                await doomed.call_tool("screenshot", {})
                async with connected(survivor.url, VISION_MODEL) as alive:
                    await alive.call_tool("screenshot", {})
                    both = set(sessions.iterdir())
                    assert len(both) == 2
                    killed.process.send_signal(signal.SIGKILL)
                    killed.process.wait(timeout=60)
                    assert set(sessions.iterdir()) == both  # nobody ended those sessions
                    with running(argv, tmp_path, name="next") as following:
                        assert wait_until(lambda: len(set(sessions.iterdir())) == 1)
                        assert "removed 1 session directory a killed gateway left" in (
                            following.text()
                        )
                        (kept,) = sessions.iterdir()
                        assert any(kept.glob("*.png"))
                        assert (await alive.call_tool("screenshot", {})).content
        except BaseException:
            killed.process.kill()
            raise
