"""Running `visiongate proxy --listen` for the tests: as a real process on a loopback port, with
the official SDK's Streamable HTTP client (or raw HTTP requests, to see every status)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _proxy_helpers import VISION, proxy_env
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

LISTENING = re.compile(r"listening on (http://\S+)")
TEXT_MODEL = {"X-Visiongate-Provider": "deepseek", "X-Visiongate-Model": "deepseek-chat"}
VISION_MODEL = {"X-Visiongate-Provider": "anthropic", "X-Visiongate-Model": "claude-sonnet-4-5"}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
CLIENT_INFO = {"name": "raw-test-client", "version": "9.9"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
INITIALIZE["params"] = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": CLIENT_INFO,
}


class GatewayProcess:
    """A gateway started as `visiongate proxy --listen 127.0.0.1:0 ...`; its log is a file."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log: Path) -> None:
        self.process = process
        self.url = url
        self.log = log
        self.home = log.parent
        """The folder it runs in (its log, its trace if the test gave one there)."""

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0]

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signum)
        return self.process.wait(timeout=timeout)


def gateway_argv(
    options: Sequence[str], server: Sequence[str] = (), *, target: Sequence[str] = VISION
) -> list[str]:
    argv = [sys.executable, "-m", "visiongate", "proxy", *target, *options]
    return [*argv, "--", *server] if server else argv


def start_gateway(
    argv: Sequence[str],
    home: Path,
    *,
    env: Mapping[str, str] | None = None,
    name: str = "gateway",
    timeout: float = 60,
) -> GatewayProcess:
    """Start the gateway and wait for its `listening on` line (a failure to start raises)."""
    log = home / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            env={**proxy_env(home), **(env or {})},
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = LISTENING.search(log.read_text(errors="replace"))
        if found:
            return GatewayProcess(process, found.group(1), log)
        if process.poll() is not None:
            raise AssertionError(f"the gateway exited {process.returncode}:\n{log.read_text()}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the gateway did not start:\n{log.read_text()}")


@contextmanager
def running(argv: Sequence[str], home: Path, **options: Any) -> Iterator[GatewayProcess]:
    gateway = start_gateway(argv, home, **options)
    try:
        yield gateway
    finally:
        if gateway.process.poll() is None:
            gateway.stop(signal.SIGTERM)


def module_gateway(
    name: str,
    options: Sequence[str],
    server: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Any:
    """A module-scoped fixture: a gateway with `options` (and `--trace`) in front of `server`,
    in a folder of its own (`gateway.home`, its trace `trace.jsonl` there)."""

    @pytest.fixture(scope="module")
    def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
        home = tmp_path_factory.mktemp(name)
        argv = gateway_argv([*options, "--trace", str(home / "trace.jsonl")], server)
        with running(argv, home, env=env) as started:
            yield started

    return gateway


@asynccontextmanager
async def connected(
    url: str, headers: Mapping[str, str] | None = None, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session through the gateway at `url`."""
    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=httpx2.Timeout(120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **callbacks) as session,
    ):
        await session.initialize()
        yield session


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (or the one JSON body)."""
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [
        json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:]
    ]


def raw_initialize(
    client: httpx2.Client, url: str, headers: Mapping[str, str] | None = None
) -> tuple[httpx2.Response, str | None]:
    """POST `initialize` (and `notifications/initialized`) without the SDK; the response and
    the session id it gave."""
    response = client.post(url, json=INITIALIZE, headers={**ACCEPT, **(headers or {})})
    session_id = response.headers.get("mcp-session-id")
    if response.status_code == 200 and session_id:
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post(
            url, json=note, headers={**ACCEPT, **(headers or {}), "mcp-session-id": session_id}
        )
    return response, session_id


def children(pid: int, needle: str) -> list[int]:
    """The live child processes of `pid` whose command line holds `needle` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z" and needle in command:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(check: Any, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())
