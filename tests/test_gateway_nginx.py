"""Two gateway replicas behind Debian's nginx, configured by the shipped example
(`examples/gateway/nginx.conf`, its ports swapped for free ones), on loopback (issue 30):
20 SDK sessions through nginx land on both replicas; one replica is SIGKILLed while every
session has a call in flight: the live replica's sessions are unaffected, the others get an
error saying their replica is gone and succeed after initializing again, on the live one; the
killed replica's servers are stopped by their watchdogs, none is left behind."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _gateway_helpers import (
    GatewayProcess,
    alive,
    children,
    gateway_argv,
    start_gateway,
    wait_until,
)
from _proxy_helpers import HOSTILE, free_port
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "gateway" / "nginx.conf"
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
SESSIONS = 20
MAIN_CONF = """
daemon off;
worker_processes 1;
pid {home}/nginx.pid;
error_log {home}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {home}/body;
    proxy_temp_path {home}/proxy;
    fastcgi_temp_path {home}/fastcgi;
    uwsgi_temp_path {home}/uwsgi;
    scgi_temp_path {home}/scgi;
    include {home}/visiongate.conf;
}}
"""

needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _configured(home: Path, ports: dict[str, int]) -> Path:
    """The example, its ports replaced, inside a main config that runs as this user."""
    text = EXAMPLE.read_text()
    for placeholder, port in (
        ("8001", ports["gw-1"]),
        ("8002", ports["gw-2"]),
        ("8080", ports["nginx"]),
    ):
        text = text.replace(f"127.0.0.1:{placeholder}", f"127.0.0.1:{port}")
    (home / "visiongate.conf").write_text(text)
    main = home / "nginx.conf"
    main.write_text(MAIN_CONF.format(home=home))
    return main


@needs_nginx
def test_the_shipped_example_is_a_valid_nginx_configuration(tmp_path: Path) -> None:
    main = _configured(tmp_path, {"gw-1": 8001, "gw-2": 8002, "nginx": 8080})
    checked = subprocess.run(
        [str(NGINX), "-t", "-c", str(main), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr


@pytest.fixture(params=["per-session", "shared"])
def upstream(request: pytest.FixtureRequest) -> str:
    """The replicas' `--upstream`: a server per session, or one for all (issue 40)."""
    return str(request.param)


@pytest.fixture
def cluster(tmp_path: Path, upstream: str) -> Iterator[tuple[str, dict[str, GatewayProcess]]]:
    replicas: dict[str, GatewayProcess] = {}
    nginx: subprocess.Popen[bytes] | None = None
    try:
        for name in ("gw-1", "gw-2"):
            options = ["--listen", "127.0.0.1:0", "--replica-id", name, "--upstream", upstream]
            replicas[name] = start_gateway(
                gateway_argv(options, [sys.executable, HOSTILE]), tmp_path, name=name
            )
        ports = {name: int(g.url.rsplit(":", 1)[1].split("/")[0]) for name, g in replicas.items()}
        ports["nginx"] = free_port()
        main = _configured(tmp_path, ports)
        nginx = subprocess.Popen(
            [str(NGINX), "-c", str(main), "-p", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_until(lambda: _answers(f"http://127.0.0.1:{ports['nginx']}/healthz"), 30)
        yield f"http://127.0.0.1:{ports['nginx']}/mcp", replicas
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(timeout=30)
        for replica in replicas.values():
            if replica.process.poll() is None:
                replica.stop(signal.SIGTERM)


def _answers(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=2).status_code == 200
    except httpx2.HTTPError:
        return False


class Client:
    """One SDK session through nginx, and the session id its `initialize` answer gave."""

    def __init__(self) -> None:
        self.session_id: str | None = None

    async def hook(self, response: httpx2.Response) -> None:
        found = response.headers.get("mcp-session-id")
        if found and self.session_id is None:
            self.session_id = found

    @asynccontextmanager
    async def session(self, url: str) -> AsyncIterator[ClientSession]:
        self.session_id = None
        async with (
            httpx2.AsyncClient(timeout=60, event_hooks={"response": [self.hook]}) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def _slow(session: ClientSession, seconds: float = 0) -> str:
    result = await session.call_tool("slow", {"seconds": seconds})
    first: Any = result.content[0]
    return str(first.text)


@needs_nginx
async def test_twenty_sessions_through_nginx_survive_the_loss_of_a_replica(
    cluster: tuple[str, dict[str, GatewayProcess]], upstream: str
) -> None:
    url, replicas = cluster
    clients = [Client() for _ in range(SESSIONS)]
    async with AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(c.session(url)) for c in clients]
        assert await asyncio.gather(*(_slow(s) for s in sessions)) == ["slept 0"] * SESSIONS
        homes = [str(c.session_id).split(".", 1)[0] for c in clients]
        assert set(homes) == {"gw-1", "gw-2"}, homes  # new sessions go to both replicas
        doomed = replicas["gw-2"]
        servers = children(doomed.process.pid, "_hostile_proxy")
        assert len(servers) == (homes.count("gw-2") if upstream == "per-session" else 1)
        # Every session has a call in flight when the replica dies.
        calls = [asyncio.ensure_future(_outcome(s, 1.0)) for s in sessions]
        await asyncio.sleep(0.4)
        doomed.process.send_signal(signal.SIGKILL)
        outcomes = await asyncio.gather(*calls)
        for home, outcome in zip(homes, outcomes, strict=True):
            assert (outcome == "slept 1.0") == (home == "gw-1"), (home, outcome)
        # Later calls: the live replica's sessions go on; the others are told to start anew.
        later = await asyncio.gather(*(_outcome(s, 0) for s in sessions))
        for home, outcome in zip(homes, later, strict=True):
            if home == "gw-1":
                assert outcome == "slept 0"
            else:
                assert "the replica that held this session is gone" in outcome, outcome
    # Re-initialized, each lost session lands on the live replica and works.
    for client, home in zip(clients, homes, strict=True):
        if home != "gw-2":
            continue
        async with client.session(url) as again:
            assert await _slow(again) == "slept 0"
        assert str(client.session_id).startswith("gw-1.")
    # The killed replica's servers were stopped by their watchdogs.
    assert all(wait_until(lambda p=p: not alive(p), 15) for p in servers)
    survivor = replicas["gw-1"]
    assert survivor.stop(signal.SIGTERM) == 0
    assert "Traceback" not in survivor.text()


async def _outcome(session: ClientSession, seconds: float) -> str:
    """The call's text, or its error's message."""
    try:
        return await _slow(session, seconds)
    except MCPError as error:
        return f"error: {error}"
    except Exception as error:  # the transport's own failure, when the stream broke
        return f"failed: {type(error).__name__}: {error}"
