"""What `visiongate proxy --listen` (the gateway) adds per call and costs per session.

Run: python bench/bench_gateway.py [--mcp-proxy PATH] [--supergateway PATH]
                                   [--peer-calls 200] [--rounds 2]
     python bench/bench_gateway.py --relay [--sessions 50] [--calls 20] [--shot-sessions 10]
                                   [--shots 5] [--rounds 2]

By default it runs the gateway beside PyPI `mcp-proxy` and npm's `supergateway`, with the
SDK's own client, and prints the table of issue 40 with ratios (`_gateway_peers.py`); the two
peers are installed on first use into a cache folder of their own (`_gateway_peers.peer_tools`),
never into the project's environment. `--relay` measures what the gateway adds to a bare stdio
server instead, in raw HTTP (below).

The upstream is `_relay_server.py`, a stdio server that answers in microseconds. Directly,
each session is that server on a pipe (one JSON line out, one back: what a client does with
no gateway); through the gateway, each session is the same server behind `visiongate proxy
--listen`, reached with raw HTTP (httpx2, one keep-alive connection per session: a POST per
request, its answer read off the SSE stream; no SDK in the measurement). Both run in this
process, in rounds that alternate direct and gateway so both see the same machine load.

Printed:
- small calls (`echo`): `--sessions` concurrent sessions x `--calls` sequential calls each,
  p50/p99 per call and what the gateway adds; and one session alone, the added latency
  without queueing (the goal: <= 2 ms p50 added). For scale, the same small calls to a server
  built on the SDK's own Streamable HTTP stack (`MCPServer.streamable_http_app()` under
  uvicorn, an `echo` tool, no gateway): the floor of that transport on this machine;
- screenshot calls (`shot`, a 1920x1080 PNG routed for a vision model, so fitted and attached):
  `--shot-sessions` x `--shots` (the same picture each time: after the first, the fit cache
  answers, so what is left is moving the 2 MB answer through the relay and the transport);
- sessions set up per second (initialize + initialized, the server process started), opened
  all at once, directly and through the gateway;
- RSS per idle session: the gateway process's growth with `--sessions` idle sessions open,
  per session, and the watchdog (`/bin/sh`) each server gets; the server's own RSS beside it
  (the goal: <= 30 MB per idle stdio session beyond the server's own).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

import httpx2

HERE: Final = Path(__file__).resolve().parent
SERVER: Final = [sys.executable, str(HERE / "_relay_server.py")]
TARGET: Final = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
ACCEPT: Final = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}
INITIALIZE: Final = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


class Direct:
    """One session straight to the server over its stdio."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.next_id = 0

    async def open(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        await self.request("initialize", INITIALIZE)
        await self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process is not None and self.process.stdout is not None
        self.next_id += 1
        await self._write(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        while line := await self.process.stdout.readline():
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                return message
        raise ConnectionError("the server ended")

    async def close(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            await self.process.wait()


class Through:
    """One session through the gateway, in raw HTTP."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = httpx2.AsyncClient(timeout=120)
        self.headers: dict[str, str] = dict(ACCEPT)
        self.next_id = 0

    async def open(self) -> None:
        response = await self._post("initialize", INITIALIZE)
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.client.post(self.url, json=note, headers=self.headers)

    async def _post(self, method: str, params: dict[str, Any]) -> httpx2.Response:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        response = await self.client.post(self.url, json=body, headers=self.headers)
        response.raise_for_status()
        return response

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await self._post(method, params)
        for line in reversed(response.text.splitlines()):
            if line.startswith("data:") and line[5:].strip():
                message: dict[str, Any] = json.loads(line[5:])
                if message.get("id") == self.next_id:
                    return message
        raise ConnectionError(f"no answer in {response.text[:200]!r}")

    async def close(self) -> None:
        await self.client.delete(self.url, headers=self.headers)
        await self.client.aclose()


async def timed(session: Direct | Through, tool: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        answer = await session.request("tools/call", {"name": tool, "arguments": {"text": "x"}})
        times.append(time.perf_counter() - started)
        assert "result" in answer, answer
    return times


async def opened(make: Any, count: int) -> tuple[list[Any], float]:
    """`count` sessions opened all at once, and how long that took."""
    sessions = [make() for _ in range(count)]
    started = time.perf_counter()
    await asyncio.gather(*(s.open() for s in sessions))
    return sessions, time.perf_counter() - started


async def round_trip(make: Any, sessions: int, tool: str, calls: int) -> tuple[list[float], float]:
    """Per-call times of `sessions` concurrent sessions making `calls` calls each (after one
    warm-up call each), and the time it took to open them."""
    opened_sessions, setup = await opened(make, sessions)
    try:
        await asyncio.gather(*(timed(s, tool, 1) for s in opened_sessions))
        runs = await asyncio.gather(*(timed(s, tool, calls) for s in opened_sessions))
    finally:
        await asyncio.gather(*(s.close() for s in opened_sessions))
    return [t for run in runs for t in run], setup


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def report(what: str, direct: list[float], through: list[float], name: str = "gateway") -> None:
    (d50, d99), (g50, g99) = percentiles(direct), percentiles(through)
    print(f"\n{what}: {len(direct)} calls each way")
    print(f"  {'path':<10} {'p50 ms':>9} {'p99 ms':>9}")
    print(f"  {'direct':<10} {d50:9.3f} {d99:9.3f}")
    print(f"  {name:<10} {g50:9.3f} {g99:9.3f}")
    print(f"  {'added':<10} {g50 - d50:+9.3f} {g99 - d99:+9.3f}   (p50 ratio {g50 / d50:.1f}x)")


SDK_SERVER: Final = """
import socket, sys, uvicorn
from mcp.server.mcpserver import MCPServer
server = MCPServer("sdk-echo")

@server.tool()
def echo(text: str = "") -> str:
    return f"echo {text}"

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.bind(("127.0.0.1", 0)); sock.listen(1024)
print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
config = uvicorn.Config(server.streamable_http_app(max_sessions=None), log_level="warning")
uvicorn.Server(config).run(sockets=[sock])
"""


def rss_kib(pid: int) -> int:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append((int(entry.name), command))
    return found


async def idle_memory(url: str, pid: int, count: int) -> None:
    warm = Through(url)  # the router's imports happen once, at the first session
    await warm.open()
    await warm.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    await warm.close()
    await asyncio.sleep(1)
    before = rss_kib(pid)
    sessions, _ = await opened(lambda: Through(url), count)
    await asyncio.gather(*(s.request("tools/list", {}) for s in sessions))
    await asyncio.sleep(1)
    after = rss_kib(pid)
    kids = children(pid)
    watchdogs = [rss_kib(p) for p, command in kids if "visiongate-watchdog" in command]
    servers = [rss_kib(p) for p, command in kids if "_relay_server" in command]
    await asyncio.gather(*(s.close() for s in sessions))
    per = (after - before) / count / 1024
    dog = statistics.mean(watchdogs) / 1024 if watchdogs else 0.0
    server = statistics.mean(servers) / 1024 if servers else 0.0
    print(f"\nRSS with {count} idle sessions open (initialized, tools listed once):")
    print(
        f"  gateway process: {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB, "
        f"{per:.2f} MiB per session"
    )
    print(f"  watchdog (/bin/sh) per session: {dog:.2f} MiB")
    print(f"  beyond the server's own, per session: {per + dog:.2f} MiB (goal <= 30 MiB)")
    print(f"  the server's own (python _relay_server.py), per session: {server:.1f} MiB")


def start_gateway(home: Path, sessions: int) -> tuple[subprocess.Popen[bytes], str]:
    command = [
        sys.executable, "-m", "visiongate", "proxy", *TARGET,
        "--listen", "127.0.0.1:0", "--trace", str(home / "trace.jsonl"),
        "--max-sessions", str(sessions * 4), "--", *SERVER,
    ]  # fmt: skip
    return start_listening(command, home / "gateway.log", home)


def start_listening(
    command: list[str], log: Path, home: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a process that says `listening on URL` on stderr; it and the URL."""
    env = {**os.environ, "VISIONGATE_CACHE_DIR": str(home / "images"), "XDG_STATE_HOME": str(home)}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://\S+)", log.read_text())
        if found:
            return process, found.group(1)
        time.sleep(0.05)
    raise RuntimeError(log.read_text())


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        process, url = start_gateway(home, args.sessions)
        sdk, sdk_url = start_listening([sys.executable, "-c", SDK_SERVER], home / "sdk.log", home)
        try:
            await measure(args, url, process.pid, sdk_url)
        finally:
            for started in (process, sdk):
                started.terminate()
                started.wait(timeout=60)


async def measure(args: argparse.Namespace, url: str, pid: int, sdk_url: str) -> None:
    direct, through, one_direct, one_through, sdk, one_sdk = [], [], [], [], [], []
    shots_direct, shots_through = [], []
    setups: dict[str, list[float]] = {"direct": [], "gateway": []}
    await idle_memory(url, pid, args.sessions)  # first: no earlier session's memory to reuse
    for _ in range(args.rounds):
        times, setup = await round_trip(Direct, args.sessions, "echo", args.calls)
        direct += times
        setups["direct"].append(args.sessions / setup)
        times, setup = await round_trip(lambda: Through(url), args.sessions, "echo", args.calls)
        through += times
        setups["gateway"].append(args.sessions / setup)
        sdk += (await round_trip(lambda: Through(sdk_url), args.sessions, "echo", args.calls))[0]
        one_direct += (await round_trip(Direct, 1, "echo", args.calls * 5))[0]
        one_through += (await round_trip(lambda: Through(url), 1, "echo", args.calls * 5))[0]
        one_sdk += (await round_trip(lambda: Through(sdk_url), 1, "echo", args.calls * 5))[0]
        shots_direct += (await round_trip(Direct, args.shot_sessions, "shot", args.shots))[0]
        make = lambda: Through(url)  # noqa: E731
        shots_through += (await round_trip(make, args.shot_sessions, "shot", args.shots))[0]
    report(f"small calls, {args.sessions} concurrent sessions x {args.calls}", direct, through)
    report("small calls, one session alone (goal: <= 2 ms p50 added)", one_direct, one_through)
    report(
        f"for scale: the SDK's own Streamable HTTP server, {args.sessions} concurrent sessions "
        f"x {args.calls}",
        direct,
        sdk,
        "sdk server",
    )
    report("for scale: the SDK's own server, one session alone", one_direct, one_sdk, "sdk server")
    report(
        f"screenshot calls (1920x1080, routed native), {args.shot_sessions} sessions "
        f"x {args.shots}",
        shots_direct,
        shots_through,
    )
    d, g = statistics.median(setups["direct"]), statistics.median(setups["gateway"])
    print(f"\nsessions set up, {args.sessions} at once (server process started, initialized):")
    print(f"  direct {d:.1f}/s, gateway {g:.1f}/s (ratio {g / d:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--shot-sessions", type=int, default=10)
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--relay", action="store_true", help="what the gateway adds to a bare stdio server"
    )
    parser.add_argument("--peers", action="store_true", help="the default: beside the peers")
    parser.add_argument("--mcp-proxy", help="PyPI mcp-proxy's command (default: on PATH)")
    parser.add_argument("--supergateway", help="npm supergateway's command (default: on PATH)")
    parser.add_argument("--peer-calls", type=int, default=200)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.relay:
        from _gateway_peers import run_peers

        args.calls = args.peer_calls
        with tempfile.TemporaryDirectory() as folder:
            run_peers(args, Path(folder))
    else:
        asyncio.run(run(args))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
