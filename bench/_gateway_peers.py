"""The gateway beside the Streamable HTTP gateways a team would pick instead (issue 40), for
`bench_gateway.py`: PyPI `mcp-proxy` and npm's `supergateway` (`--mcp-proxy PATH`,
`--supergateway PATH`, else on PATH, else installed on first use under
`$XDG_CACHE_HOME/visiongate-bench/`: `mcp-proxy` into a virtual environment of its own, never
the project's, and `supergateway` with npm when npm is here). Each runs as a process of its
own on a free loopback port in front of the same instant stdio server (`_relay_server.py`),
and is measured with the same client, the official SDK's Streamable HTTP client, in rounds
that take the contenders in turn, so all see the same machine load. Printed: the issue's
table, each figure with its ratio to `mcp-proxy`'s.

- spawn to a first initialized session: from starting the process to an SDK session's
  `initialize` answered (polling the port);
- small call p50 / p99, sequential: one session, one `echo` call after another;
- calls/s, 8 in flight: one session, 8 calls kept in flight;
- p99, 10 sessions x 50 calls: ten sessions at once, 50 sequential calls each;
- 10 sessions in front of server-everything (npm): time to open them, and the memory of the
  whole process tree (the gateway and every server), beside one session's.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

HERE: Final = Path(__file__).resolve().parent
INSTANT: Final = [sys.executable, str(HERE / "_relay_server.py")]
EVERYTHING: Final = (
    HERE.parent / "tests" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
)
TARGET: Final = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


@dataclass(frozen=True)
class Contender:
    name: str
    argv: Callable[[int, list[str]], list[str]]
    """The command line for a port and a server command."""


def contenders(mcp_proxy: str | None, supergateway: str | None) -> list[Contender]:
    def visiongate(mode: str) -> Callable[[int, list[str]], list[str]]:
        return lambda port, server: [
            sys.executable, "-m", "visiongate", "proxy", *TARGET, "--listen",
            f"127.0.0.1:{port}", "--upstream", mode, "--", *server,
        ]  # fmt: skip

    found = [
        Contender("visiongate", visiongate("per-session")),
        Contender("visiongate shared", visiongate("shared")),
    ]
    if mcp_proxy:
        found.append(
            Contender(
                "mcp-proxy",
                lambda port, server: [
                    mcp_proxy,
                    "--port",
                    str(port),
                    "--host",
                    "127.0.0.1",
                    "--pass-environment",
                    "--log-level",
                    "WARNING",
                    "--",
                    *server,
                ],
            )
        )
    if supergateway:
        found.append(
            Contender(
                "supergateway",
                lambda port, server: [
                    supergateway,
                    "--stdio",
                    " ".join(server),
                    "--outputTransport",
                    "streamableHttp",
                    "--port",
                    str(port),
                    "--logLevel",
                    "none",
                ],
            )
        )
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Running:
    process: subprocess.Popen[bytes]
    url: str
    spawned_s: float = 0.0
    log: Path = field(default_factory=Path)


@contextmanager
def started(contender: Contender, server: list[str], home: Path) -> Iterator[Running]:
    port = free_port()
    log = home / f"{contender.name.replace(' ', '-')}-{port}.log"
    env = {**os.environ, "VISIONGATE_CACHE_DIR": str(home / "images"), "XDG_STATE_HOME": str(home)}
    with log.open("wb") as sink:
        began = time.perf_counter()
        process = subprocess.Popen(
            contender.argv(port, server), stdout=sink, stderr=sink, env=env,
            start_new_session=True,
        )  # fmt: skip
    running = Running(process, f"http://127.0.0.1:{port}/mcp", log=log)
    try:
        asyncio.run(_first_session(running, began))
        yield running
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


async def _first_session(running: Running, began: float) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            async with session(running.url):
                running.spawned_s = time.perf_counter() - began
                return
        except Exception:
            if running.process.poll() is not None:
                raise RuntimeError(running.log.read_text()) from None
            await asyncio.sleep(0.005)
    raise RuntimeError(f"no session within 60 s: {running.log.read_text()[-2000:]}")


@asynccontextmanager
async def session(url: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


async def _echo(client: ClientSession) -> float:
    began = time.perf_counter()
    result = await client.call_tool("echo", {"text": "x"})
    assert not result.is_error, result
    return time.perf_counter() - began


async def sequential(url: str, calls: int) -> list[float]:
    async with session(url) as client:
        await _echo(client)
        return [await _echo(client) for _ in range(calls)]


async def throughput(url: str, calls: int, in_flight: int = 8) -> float:
    async with session(url) as client:
        await _echo(client)
        remaining = calls

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                await _echo(client)

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return calls / (time.perf_counter() - began)


async def many(url: str, sessions: int, calls: int) -> list[float]:
    async def one() -> list[float]:
        async with session(url) as client:
            await _echo(client)
            return [await _echo(client) for _ in range(calls)]

    runs = await asyncio.gather(*(one() for _ in range(sessions)))
    return [t for run in runs for t in run]


def tree_rss_mib(pid: int) -> float:
    """The resident memory of `pid` and every process under it."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            status = (entry / "status").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        kib = next(
            (line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")), "0"
        )
        rss[int(entry.name)] = int(kib)
    wanted, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in wanted:
                wanted.add(child)
                frontier.append(child)
    return sum(rss.get(p, 0) for p in wanted) / 1024


async def opened_sessions(url: str, count: int, pid: int) -> tuple[float, float]:
    """Open `count` sessions at once (each lists its tools), keep them open; the time it took
    and the tree's memory then."""
    async with asyncio.TaskGroup() as group:
        ready = asyncio.Event()
        opened: list[int] = []
        release = asyncio.Event()

        async def hold() -> None:
            async with session(url) as client:
                await client.list_tools()
                opened.append(1)
                if len(opened) == count:
                    ready.set()
                await release.wait()

        began = time.perf_counter()
        for _ in range(count):
            group.create_task(hold())
        await ready.wait()
        took = time.perf_counter() - began
        await asyncio.sleep(1.0)
        memory = tree_rss_mib(pid)
        release.set()
    return took, memory


def p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


@dataclass
class Figures:
    spawn: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    rate: list[float] = field(default_factory=list)
    many_p99: list[float] = field(default_factory=list)
    open_s: list[float] = field(default_factory=list)
    memory: list[float] = field(default_factory=list)
    one_memory: list[float] = field(default_factory=list)


def measure_round(contender: Contender, figures: Figures, home: Path, args: Any) -> None:
    with started(contender, INSTANT, home) as running:
        figures.spawn.append(running.spawned_s * 1000)
        times = asyncio.run(sequential(running.url, args.calls))
        figures.p50.append(p(times, 0.5))
        figures.p99.append(p(times, 0.99))
        figures.rate.append(asyncio.run(throughput(running.url, args.calls * 2)))
        figures.many_p99.append(p(asyncio.run(many(running.url, 10, 50)), 0.99))
    if not EVERYTHING.exists():
        return
    with started(contender, [str(EVERYTHING)], home) as running:
        figures.one_memory.append(
            asyncio.run(opened_sessions(running.url, 1, running.process.pid))[1]
        )
    with started(contender, [str(EVERYTHING)], home) as running:
        took, memory = asyncio.run(opened_sessions(running.url, 10, running.process.pid))
        figures.open_s.append(took * 1000)
        figures.memory.append(memory)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(results: dict[str, Figures], base: str) -> str:
    rows = [
        ("spawn to a first initialized session, ms", "spawn", False),
        ("small call p50, sequential, ms", "p50", False),
        ("small call p99, sequential, ms", "p99", False),
        ("calls/s, 8 in flight", "rate", True),
        ("p99, 10 sessions x 50 calls, ms", "many_p99", False),
        ("10 sessions before server-everything: time to open, ms", "open_s", False),
        ("10 sessions before server-everything: memory in all, MiB", "memory", False),
        ("1 session before server-everything: memory in all, MiB", "one_memory", False),
    ]
    names = list(results)
    head = "| figure | " + " | ".join(names) + " |"
    lines = [head, "|---|" + "---|" * len(names)]
    for label, key, _ in rows:
        reference = median(getattr(results[base], key)) if base in results else float("nan")
        cells = []
        for name in names:
            value = median(getattr(results[name], key))
            ratio = value / reference if reference == reference and reference else float("nan")
            shown = f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
            cells.append(shown if name == base else f"{shown} ({ratio:.2f}x)")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


MCP_PROXY: Final = "mcp-proxy==0.13.0"
SUPERGATEWAY: Final = "supergateway@4.0.0"


def peer_tools(args: Any) -> tuple[str | None, str | None]:
    """The peers' commands: given, on PATH, or installed now into the bench's cache folder."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "visiongate-bench"
    mcp_proxy = args.mcp_proxy or shutil.which("mcp-proxy")
    if mcp_proxy is None:
        venv = cache / "mcp-proxy"
        if not (venv / "bin" / "mcp-proxy").exists():
            print(f"installing {MCP_PROXY} into {venv} (once)", flush=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = [str(venv / "bin" / "pip"), "install", "-q", MCP_PROXY]
            subprocess.run(pip, check=True)
        mcp_proxy = str(venv / "bin" / "mcp-proxy")
    supergateway = args.supergateway or shutil.which("supergateway")
    npm = shutil.which("npm")
    if supergateway is None and npm is not None:
        folder = cache / "supergateway"
        found = folder / "node_modules" / ".bin" / "supergateway"
        if not found.exists():
            print(f"installing {SUPERGATEWAY} into {folder} (once)", flush=True)
            install = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund"]
            subprocess.run([*install, SUPERGATEWAY], check=True, stdout=subprocess.DEVNULL)
        supergateway = str(found)
    return mcp_proxy, supergateway


def run_peers(args: Any, home: Path) -> None:
    mcp_proxy, supergateway = peer_tools(args)
    found = contenders(mcp_proxy, supergateway)
    if not mcp_proxy:
        print("mcp-proxy not found (pip install mcp-proxy into another venv; --mcp-proxy PATH)")
    results = {contender.name: Figures() for contender in found}
    for round_number in range(args.rounds):
        for contender in found:  # interleaved: every contender once per round
            measure_round(contender, results[contender.name], home, args)
        print(f"round {round_number + 1} of {args.rounds} done", flush=True)
    base = "mcp-proxy" if "mcp-proxy" in results else found[0].name
    print(f"\nratios against {base} (median of {args.rounds} rounds; {args.calls} calls a run)")
    print(table(results, base))
    shared = results.get("visiongate shared")
    if shared is not None and shared.memory and shared.one_memory:
        ratio = median(shared.memory) / median(shared.one_memory)
        print(
            f"\nvisiongate shared: 10 sessions use {ratio:.2f}x one session's memory (goal <= 1.5x)"
        )
