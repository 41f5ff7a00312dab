"""Running `visiongate proxy` for the tests: as a real process, in front of real servers, with
the official SDK's client (or a raw one that sees every byte the proxy writes)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import _warm
import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
NPM_DIR = ROOT / "tests" / "npm"
EVERYTHING = NPM_DIR / "node_modules" / ".bin" / "mcp-server-everything"
FILESYSTEM = NPM_DIR / "node_modules" / ".bin" / "mcp-server-filesystem"
PLAYWRIGHT = NPM_DIR / "node_modules" / ".bin" / "playwright-mcp"
HOSTILE = str(Path(__file__).parent / "_hostile_proxy.py")
VISION = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
TEXT_ONLY = ["--provider", "deepseek", "--model", "deepseek-chat"]
INITIALIZE_PARAMS: dict[str, Any] = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": INITIALIZE_PARAMS,
}
"""A client's first message, as a raw client writes it on the proxy's stdin."""
INSTANT_SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        result = {"protocolVersion": "2025-06-18", "capabilities": {},
                  "serverInfo": {"name": "plain", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""
"""A stdio server (`python -c`) that answers every request with an `initialize` result at once
and imports nothing: what an import budget or a start-up figure measures against."""


def proxy_argv(server: Sequence[str], *options: str, target: Sequence[str] = VISION) -> list[str]:
    return [sys.executable, "-m", "visiongate", "proxy", *target, *options, "--", *server]


@_warm.hands_out
def warm_proxy_argv(
    server: Sequence[str], *options: str, target: Sequence[str] = VISION
) -> list[str]:
    """`proxy_argv`, as the command of a warm stand-in (`_warm`): for the tests of what a proxy
    does in a session, not of how it starts or ends (its imports, signals, process group)."""
    return _warm.server_command(proxy_argv(server, *options, target=target))


def proxy_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "VISIONGATE_CACHE_DIR": str(home / "images"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        # A proxy that hangs in a test can be asked where it is: SIGABRT then prints every
        # thread's stack to its stderr (the test's log) before it dies.
        "PYTHONFAULTHANDLER": "1",
    }


def everything_command() -> list[str]:
    """The reference server `@modelcontextprotocol/server-everything`, pinned in
    tests/npm/package.json; installed there (`npm ci`) when npm is here and it is not yet."""
    return [str(_npm_server(EVERYTHING)), "stdio"]


def filesystem_command(*roots: Path) -> list[str]:
    """The reference server `@modelcontextprotocol/server-filesystem` (pinned in tests/npm)
    serving `roots`."""
    return [str(_npm_server(FILESYSTEM)), *(str(root) for root in roots)]


def playwright_command(chromium: str, output: Path) -> list[str]:
    """Microsoft's `@playwright/mcp` (pinned in tests/npm), a browser tool most coding agents
    run, on Debian's Chromium (Playwright's own browser download cannot run here), headless
    and in a fresh profile, writing its files under `output`, never into the checkout."""
    return [
        str(_npm_server(PLAYWRIGHT)), "--headless", "--isolated", "--no-sandbox",
        "--executable-path", chromium, "--output-dir", str(output),
    ]  # fmt: skip


def _npm_server(binary: Path) -> Path:
    if not binary.exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not installed, so {binary.name} cannot be")
        subprocess.run(
            [npm, "ci", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund"],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return binary


@asynccontextmanager
async def proxied(
    argv: Sequence[str], home: Path, errlog: Path | None = None, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with `argv` (the proxy) as its server."""
    parameters = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=proxy_env(home))
    log_path = errlog if errlog is not None else home / "proxy.log"
    with log_path.open("a", encoding="utf-8") as log:
        async with (
            stdio_client(parameters, errlog=log) as (read, write),
            ClientSession(read, write, **callbacks) as session,
        ):
            await session.initialize()
            yield session


def read_trace(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class RawClient:
    """A client that writes JSON-RPC lines and keeps every line the proxy writes, with its size."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self.next_id = 0

    @classmethod
    async def start(
        cls, argv: Sequence[str], home: Path, *, sigint_ignored: bool = False
    ) -> RawClient:
        """The proxy at `argv`, its stderr in `home/proxy.log`; `sigint_ignored` starts it as a
        shell starts a background job (`cmd &`)."""
        log = (home / "proxy.log").open("ab")
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env=proxy_env(home),
            limit=256 * 1024 * 1024,
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
            if sigint_ignored
            else None,
        )
        log.close()
        return cls(process)

    async def send_line(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_line(json.dumps(message).encode())

    async def read(self, timeout: float = 60) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            return None
        self.lines.append(line)
        parsed: dict[str, Any] = json.loads(line)
        return parsed

    async def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 60
    ) -> dict[str, Any]:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await self.answer(self.next_id, timeout)

    async def answer(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        while True:
            message = await self.read(timeout)
            if message is None:
                raise ConnectionError("the proxy closed its output")
            if message.get("id") == request_id and "method" not in message:
                return message

    async def initialize(self) -> dict[str, Any]:
        params = {**INITIALIZE_PARAMS, "clientInfo": {"name": "raw", "version": "1"}}
        answer = await self.request("initialize", params)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    async def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), 30)


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_for_port(port: int, seconds: float = 60) -> bool:
    """Whether something listens on the loopback `port` within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as attempt:
            if attempt.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


async def eventually(check: Callable[[], bool], seconds: float = 15) -> None:
    """Wait, without blocking the event loop, until `check()` holds (TimeoutError after
    `seconds`)."""
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.1)


class SeenHeaders:
    """ASGI middleware that keeps the headers of every request the server got."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


@contextmanager
def example_over_http() -> Iterator[tuple[str, SeenHeaders]]:
    """The example server over Streamable HTTP (the SDK's own app under uvicorn, in a thread):
    its URL, and the headers it was sent."""
    from _hostile_mcp import build_server  # the example server and the tests' hostile tools

    app = SeenHeaders(build_server().streamable_http_app())
    with served_over_http(app) as url:
        yield url, app


@contextmanager
def served_over_http(app: Any) -> Iterator[str]:
    """An ASGI app under uvicorn on a loopback port, in a thread; the URL of its `/mcp`."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
