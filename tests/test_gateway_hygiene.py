"""Sessions of clients that never send DELETE (issue 40): the MCP Inspector CLI opens a session,
calls, and leaves; before, each held a server until `--idle-timeout` (1,800 s) and the table
filled up. Now the session idle longest gives way to a new one when the table is full, or when
its credentials are at `--max-sessions-per-credential`; a session in use never does; the
evicted client's next request gets 404 (initialize again), and `/metrics` counts both."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import httpx2
import pytest
from _gateway_helpers import (
    ACCEPT,
    children,
    gateway_argv,
    raw_initialize,
    running,
    wait_until,
)
from _warm import server_command
from test_gateway_lifecycle import Background, _call

from visiongate.adapters.mcp.example_server import MODULE

pytestmark = pytest.mark.slow
TOKEN = "a-token-for-the-hygiene-tests-0123"


def _metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def _list(client: httpx2.Client, url: str, session_id: str, **headers: str) -> int:
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    sent = {**ACCEPT, **headers, "mcp-session-id": session_id}
    return client.post(url, json=listing, headers=sent).status_code


def test_a_full_table_evicts_the_session_idle_longest_never_one_in_use(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--max-sessions", "2", "--evict-idle-after", "5"],
        server_command(),
    )
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        _, oldest = raw_initialize(client, gateway.url)  # never deleted
        _, newer = raw_initialize(client, gateway.url)
        assert oldest and newer
        time.sleep(2)
        assert _list(client, gateway.url, newer) == 200  # used: the other is idle longest
        # `oldest` is idle over 5 s now; were `newer` too (a slow answer), the idle longest
        # still goes first.
        time.sleep(3.5)
        third, third_id = raw_initialize(client, gateway.url)
        assert third.status_code == 200 and third_id
        assert _list(client, gateway.url, oldest) == 404  # evicted: it initializes again
        assert _list(client, gateway.url, newer) == 200
        # None idle long enough: refused as before, nobody is pushed out.
        refused, _ = raw_initialize(client, gateway.url)
        assert refused.status_code == 503 and "--max-sessions" in refused.text
        pid = gateway.process.pid
        assert wait_until(lambda: len(children(pid, MODULE)) == 2)  # its server stopped
        metrics = client.get(f"{gateway.base}/metrics").text
    assert _metric(metrics, 'visiongate_sessions_evicted_total{reason="full"}') == 1
    assert _metric(metrics, 'visiongate_sessions_ended_total{reason="evicted"}') == 1
    assert "evicted after" in gateway.text() and "Traceback" not in gateway.text()


def test_a_session_with_a_call_in_flight_is_never_evicted(tmp_path: Path) -> None:
    from _proxy_helpers import HOSTILE

    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--max-sessions", "1", "--evict-idle-after", "0.2"],
        [sys.executable, HOSTILE],
    )
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        _, busy = raw_initialize(client, gateway.url)
        assert busy
        slow = Background(
            gateway.url, _call("slow", {"seconds": 2}), {**ACCEPT, "mcp-session-id": busy}
        )
        time.sleep(0.8)
        refused, _ = raw_initialize(client, gateway.url)
        assert refused.status_code == 503
        assert slow.messages()[-1]["result"]["content"][0]["text"] == "slept 2"


def test_a_cap_per_credential_evicts_that_clients_own_idle_session(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--token-env", "VG_TEST_TOKEN", "--max-sessions", "10",
         "--max-sessions-per-credential", "2", "--evict-idle-after", "10"],
        server_command(),
    )  # fmt: skip
    bearer = {"authorization": f"Bearer {TOKEN}"}
    with (
        running(argv, tmp_path, env={"VG_TEST_TOKEN": TOKEN}) as gateway,
        httpx2.Client(timeout=60) as client,
    ):
        ids = [raw_initialize(client, gateway.url, bearer)[1] for _ in range(2)]
        assert all(ids)
        # A third at once: both of its sessions were just used, so it waits (429).
        refused, _ = raw_initialize(client, gateway.url, bearer)
        assert refused.status_code == 429
        assert "--max-sessions-per-credential" in refused.json()["error"]["message"]
        time.sleep(10.5)
        again, third = raw_initialize(client, gateway.url, bearer)
        assert again.status_code == 200 and third  # its own oldest gave way
        assert _list(client, gateway.url, str(ids[0]), **bearer) == 404
        assert _list(client, gateway.url, str(ids[1]), **bearer) == 200
        metrics = client.get(f"{gateway.base}/metrics", headers=bearer).text
    assert _metric(metrics, 'visiongate_sessions_evicted_total{reason="credential_cap"}') == 1
    assert _metric(metrics, 'visiongate_http_refused_total{reason="credential_cap"}') == 1
