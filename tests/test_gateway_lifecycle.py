"""The gateway's sessions under load and when things end (issue 30): per-session concurrency,
a server that crashes mid-call, SIGTERM draining calls in flight and stopping every server,
exit 0; all against the hostile test server, whose calls can be slow or never answered."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
from _gateway_helpers import (
    ACCEPT,
    alive,
    children,
    gateway_argv,
    raw_initialize,
    running,
    sse_messages,
    start_gateway,
    wait_until,
)
from _hostile_proxy import STARTED
from _proxy_helpers import HOSTILE

from visiongate.adapters.proxy._jsonrpc import UPSTREAM_CLOSED


def _call(name: str, arguments: dict[str, Any], request_id: int = 10) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Background:
    """A POST in a thread of its own: its response once it comes."""

    def __init__(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.response: httpx2.Response | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(url, body, headers), daemon=True)
        self._thread.start()

    def _run(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        try:
            with httpx2.Client(timeout=60) as client:
                self.response = client.post(url, json=body, headers=headers)
        except BaseException as error:
            self.error = error

    def messages(self, timeout: float = 60) -> list[dict[str, Any]]:
        self._thread.join(timeout)
        assert self.response is not None, self.error
        return sse_messages(self.response.text)


def test_requests_over_the_sessions_concurrency_are_refused(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--session-concurrency", "1"], [sys.executable, HOSTILE]
    )
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        _, session_id = raw_initialize(client, gateway.url)
        assert session_id
        headers = {**ACCEPT, "mcp-session-id": session_id}
        slow = Background(gateway.url, _call("slow", {"seconds": 2}, 11), headers)
        assert wait_until(lambda: STARTED in gateway.text())  # the call is at the server
        refused = client.post(gateway.url, json=_call("slow", {"seconds": 0}, 12), headers=headers)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        assert refused.json()["id"] == 12
        assert "(--session-concurrency)" in refused.json()["error"]["message"]
        assert slow.messages()[-1]["result"]["content"][0]["text"] == "slept 2"
        after = client.post(gateway.url, json=_call("slow", {"seconds": 0}, 13), headers=headers)
        assert after.status_code == 200


def test_a_server_that_crashes_mid_call_ends_its_session_and_a_new_one_starts(
    tmp_path: Path,
) -> None:
    argv = gateway_argv(["--listen", "127.0.0.1:0"], [sys.executable, HOSTILE, "crash"])
    with running(argv, tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        _, session_id = raw_initialize(client, gateway.url)
        assert session_id
        headers = {**ACCEPT, "mcp-session-id": session_id}
        crashed = client.post(gateway.url, json=_call("slow", {"seconds": 0}), headers=headers)
        (answer,) = sse_messages(crashed.text)
        assert answer["error"]["code"] == UPSTREAM_CLOSED
        assert "exited with status 3 before answering `tools/call`" in answer["error"]["message"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert wait_until(
            lambda: client.post(gateway.url, json=listing, headers=headers).status_code == 404
        )
        again, other = raw_initialize(client, gateway.url)
        assert again.status_code == 200 and other and other != session_id
    assert "ended (upstream_gone)" in gateway.text()
    assert "Traceback" not in gateway.text()


def test_sigterm_drains_calls_in_flight_stops_every_server_and_exits_0(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--drain-timeout", "10"], [sys.executable, HOSTILE]
    )
    gateway = start_gateway(argv, tmp_path)
    pid = gateway.process.pid
    with httpx2.Client(timeout=60) as client:
        ids = [raw_initialize(client, gateway.url)[1] for _ in range(2)]
        assert all(ids)
        assert wait_until(lambda: len(children(pid, "_hostile_proxy")) == 2)
        servers = children(pid, "_hostile_proxy")
        slow = Background(
            gateway.url, _call("slow", {"seconds": 2}), {**ACCEPT, "mcp-session-id": str(ids[0])}
        )
        assert wait_until(lambda: STARTED in gateway.text())  # the call is at the server
        gateway.process.send_signal(signal.SIGTERM)
        assert wait_until(lambda: "draining:" in gateway.text())  # the signal was taken
        assert client.get(f"{gateway.base}/readyz").status_code == 503
        refused, _ = raw_initialize(client, gateway.url)
        assert refused.status_code == 503 and "shutting down" in refused.text
        more = client.post(
            gateway.url,
            json=_call("slow", {"seconds": 0}, 20),
            headers={**ACCEPT, "mcp-session-id": str(ids[1])},
        )
        assert more.status_code == 503 and more.json()["id"] == 20
        assert slow.messages()[-1]["result"]["content"][0]["text"] == "slept 2"
    assert gateway.process.wait(timeout=30) == 0
    assert all(wait_until(lambda p=p: not alive(p), 5) for p in servers)
    log = gateway.text()
    assert "draining: 2 session(s), 1 request(s) in flight" in log
    assert "stopped by SIGTERM after draining" in log and "Traceback" not in log


def test_a_drain_past_its_deadline_answers_what_is_left_and_exits_0(tmp_path: Path) -> None:
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--drain-timeout", "1"], [sys.executable, HOSTILE]
    )
    gateway = start_gateway(argv, tmp_path)
    with httpx2.Client(timeout=60) as client:
        _, session_id = raw_initialize(client, gateway.url)
        hung = Background(
            gateway.url, _call("hang", {}), {**ACCEPT, "mcp-session-id": str(session_id)}
        )
        assert wait_until(lambda: STARTED in gateway.text())  # the call is at the server
        started = time.monotonic()
        gateway.process.send_signal(signal.SIGTERM)
        (answer,) = hung.messages()
        assert "stopped before answering `tools/call`" in answer["error"]["message"]
    assert gateway.process.wait(timeout=30) == 0
    assert time.monotonic() - started < 10
    assert "1 request(s) were still in flight at the drain's deadline" in gateway.text()


def test_a_backtracking_output_schema_stops_nothing_behind_the_gateway(tmp_path: Path) -> None:
    """Regression (issue 36, item 1): behind `--listen`, a tool whose `outputSchema` has a
    `pattern` that backtracks (`^(a+)+$` on 40 a's and `!`, which freezes Python's `re`, and
    `^(a|aa)+$` on 60, which backtracks in `regex` too) stopped every session, `/healthz` and
    new sessions, and SIGTERM did nothing. While such checks run, `/healthz`, another session
    and a new one are answered; each call gets an error naming its tool (and the bound, where
    the check ran out of it); SIGTERM during one ends the gateway and its servers."""
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--drain-timeout", "10"], [sys.executable, HOSTILE]
    )
    gateway = start_gateway(argv, tmp_path)
    pid = gateway.process.pid

    def headers(session_id: str | None) -> dict[str, str]:
        return {**ACCEPT, "mcp-session-id": str(session_id)}

    with httpx2.Client(timeout=60) as client:
        _, hostile_session = raw_initialize(client, gateway.url)
        _, other_session = raw_initialize(client, gateway.url)
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        client.post(gateway.url, json=listing, headers=headers(hostile_session))  # the schemas
        checks = [
            Background(gateway.url, _call(tool, {}, number), headers(hostile_session))
            for number, tool in enumerate(["backtrack", "backtrack2", "backtrack2"], 30)
        ]
        assert client.get(f"{gateway.base}/healthz").json() == {"status": "ok"}
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        (pong,) = sse_messages(
            client.post(gateway.url, json=ping, headers=headers(other_session)).text
        )
        assert pong == {"jsonrpc": "2.0", "id": 3, "result": {}}
        other = client.post(
            gateway.url, json=_call("slow", {"seconds": 0}, 4), headers=headers(other_session)
        )
        assert sse_messages(other.text)[-1]["result"]["content"][0]["text"] == "slept 0"
        fresh, fresh_session = raw_initialize(client, gateway.url)
        assert fresh.status_code == 200 and fresh_session
        said = {
            "backtrack": "does not satisfy `pattern`",
            "backtrack2": "longer than the bound of 2 s",
        }
        for check, tool in zip(checks, ["backtrack", "backtrack2", "backtrack2"], strict=True):
            (answer,) = [m for m in check.messages() if "id" in m and "method" not in m]
            message = answer["error"]["message"]
            assert f"`{tool}`" in message and said[tool] in message, answer
        servers = children(pid, "_hostile_proxy")
        assert len(servers) == 3
        hung = Background(gateway.url, _call("backtrack2", {}, 40), headers(hostile_session))
        time.sleep(0.3)  # the check is under way (it runs for its whole 2 s bound)
        gateway.process.send_signal(signal.SIGTERM)
        (answer,) = [m for m in hung.messages() if "id" in m and "method" not in m]
        assert answer["id"] == 40 and "error" in answer, answer
    assert gateway.process.wait(timeout=30) == 0
    assert all(wait_until(lambda p=p: not alive(p), 5) for p in servers)
    assert "Traceback" not in gateway.text()
