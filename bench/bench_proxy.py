"""What `visiongate proxy` adds to a tool call, and what it forwards untouched.

Run: python bench/bench_proxy.py [--calls 1000] [--shots 30] [--fastmcp PYTHON] [--checks]
                                 [--startup 10]

A raw JSON-RPC client (a pipe, one line out, one line back: no SDK in the measurement) calls
`tools/call` on `_relay_server.py`, a server that answers in microseconds, directly and
through the proxy; blocks of 50 calls alternate between the two so both see the same machine
load. Printed: p50 and p99 per call and what the proxy adds. With `--shots`, the same for a
1920x1080 screenshot, next to the image stage's own time for that image (`process_images`
in this process, the same target), which is the part of the added time that is image work.

`--startup N` measures what a desktop client waits for at launch: the time from starting the
process to the answer to its `initialize`, for each server directly and through the proxy,
alternating, N times each (median): the reference server `server-everything` (node, from
tests/npm), the project's example server (Python, the MCP SDK) and `_relay_server.py`. Goal:
proxied <= direct + 150 ms. Also printed, medians too: the CPU time of each life (the command
and the processes it waited for, so the proxy's server and watchdog with the proxy), and for
`_relay_server.py` the answer time of a `tools/call` sent right after the handshake, which
waits for the router the proxy builds once its first answer is out.

`--checks` runs the forwarding checklist (initialize as negotiated, pagination cursors, an
unknown method, ping, progress, a server-to-client sampling request answered by the client,
cancellation) through each proxy. `--fastmcp PYTHON` adds FastMCP's proxy
(`_fastmcp_proxy.py`, run by an interpreter that has `fastmcp`) to both measurements: the
figures behind the choice of a raw relay over a proxy framework.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
SERVER: Final = [sys.executable, str(HERE / "_relay_server.py")]
BLOCK: Final = 50
TARGET: Final = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]


class RawClient:
    """One MCP session over a child's stdio, written and read line by line."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.next_id = 0
        self.seen: list[dict[str, Any]] = []
        self.on_request: Callable[[dict[str, Any]], Any] = lambda request: {}

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        return self.wait(self.next_id)

    def wait(self, request_id: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message
            self.seen.append(message)
            if "method" in message and "id" in message:
                self.send(
                    {"jsonrpc": "2.0", "id": message["id"], "result": self.on_request(message)}
                )
        raise ConnectionError(f"the session ended before an answer to {request_id}")

    def initialize(self) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        answer = self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
FIRST_CALL: Final = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "x"}},
}
STARTUP_GOAL_MS: Final = 150.0


def startup_servers() -> dict[str, list[str]]:
    everything = HERE.parent / "tests" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"
    servers = {
        "relay (python, raw)": SERVER,
        "example (python, mcp sdk)": [
            sys.executable,
            "-m",
            "visiongate.adapters.mcp.example_server",
        ],
    }
    if everything.exists():
        servers = {"everything (node)": [str(everything), "stdio"], **servers}
    return servers


@dataclass(frozen=True)
class Life:
    """One start of a server (or of the proxy in front of it), until it exits."""

    first_answer_ms: float
    """From starting the command to reading its answer to `initialize`."""
    first_call_ms: float | None
    """A `tools/call` of `echo` sent right after the handshake, to its answer (`_relay_server`
    only: the proxy builds its router meanwhile)."""
    cpu_ms: float
    """The CPU time of the command and every process it waited for (the proxy: the server
    and the watchdog too), over its whole life."""


def one_life(command: list[str], env: dict[str, str], *, call: bool = False) -> Life:
    before = _children_cpu_s()
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    answer = _ask(process, INITIALIZE)
    elapsed = (time.perf_counter() - start) * 1000
    assert "result" in answer, f"no answer to initialize from {command}"
    first_call = None
    if call:
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        sent = time.perf_counter()
        assert "result" in _ask(process, FIRST_CALL), f"no answer to tools/call from {command}"
        first_call = (time.perf_counter() - sent) * 1000
    process.stdin.close()
    process.wait(timeout=30)
    return Life(elapsed, first_call, (_children_cpu_s() - before) * 1000)


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _ask(process: subprocess.Popen[bytes], request: dict[str, Any]) -> dict[str, Any]:
    assert process.stdout is not None
    _send(process, request)
    while line := process.stdout.readline():
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request["id"]:
            return message
    return {}


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def startup(rounds: int, env: dict[str, str]) -> None:
    print(f"\ntime to the first `initialize` answer, median of {rounds} (alternating):")
    print(f"  {'server':<28} {'direct ms':>10} {'proxied ms':>11} {'added ms':>9}  goal")
    extra: list[str] = []
    for name, server in startup_servers().items():
        proxied = [sys.executable, "-m", "visiongate", "proxy", *TARGET, "--", *server]
        call = server == SERVER
        direct: list[Life] = []
        through: list[Life] = []
        for _ in range(rounds):
            direct.append(one_life(server, env, call=call))
            through.append(one_life(proxied, env, call=call))
        base = statistics.median(life.first_answer_ms for life in direct)
        added = statistics.median(life.first_answer_ms for life in through) - base
        verdict = "met" if added <= STARTUP_GOAL_MS else "MISSED"
        print(f"  {name:<28} {base:10.0f} {base + added:11.0f} {added:+9.0f}  {verdict}")
        cpu = [statistics.median(life.cpu_ms for life in lives) for lives in (direct, through)]
        extra.append(f"  {name:<28} CPU per life: direct {cpu[0]:.0f} ms, proxied {cpu[1]:.0f} ms")
        if call:
            calls = [
                statistics.median(life.first_call_ms or 0.0 for life in lives)
                for lives in (direct, through)
            ]
            extra.append(
                f"  {name:<28} first tools/call right after the handshake: direct "
                f"{calls[0]:.1f} ms, proxied {calls[1]:.1f} ms"
            )
    print("\n".join(extra))


def proxy_command(trace: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "visiongate",
        "proxy",
        *TARGET,
        "--trace",
        str(trace),
        "--",
        *SERVER,
    ]


def fastmcp_command(python: str) -> list[str]:
    return [python, str(HERE / "_fastmcp_proxy.py"), *SERVER]


def timed_calls(client: RawClient, count: int, tool: str) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        answer = client.request("tools/call", {"name": tool, "arguments": {"text": "x"}})
        times.append(time.perf_counter() - start)
        assert "result" in answer, answer
    return times


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000


def latency(clients: dict[str, RawClient], calls: int, tool: str) -> dict[str, list[float]]:
    """`calls` calls per client, in alternating blocks, after a warm-up of one block each."""
    times: dict[str, list[float]] = {name: [] for name in clients}
    for client in clients.values():
        timed_calls(client, min(BLOCK, calls), tool)
    for _ in range(max(1, calls // BLOCK)):
        for name, client in clients.items():
            times[name] += timed_calls(client, min(BLOCK, calls), tool)
    return times


def report(times: dict[str, list[float]], what: str) -> None:
    base50, base99 = percentiles(times["direct"])
    print(f"\n{what}: {len(times['direct'])} calls each")
    print(f"  {'path':<12} {'p50 ms':>8} {'p99 ms':>8} {'added p50':>10} {'added p99':>10}")
    for name, values in times.items():
        p50, p99 = percentiles(values)
        print(f"  {name:<12} {p50:8.3f} {p99:8.3f} {p50 - base50:+10.3f} {p99 - base99:+10.3f}")


def image_stage_ms(rounds: int) -> float:
    """The image stage alone on the benchmark's screenshot, for the route the proxy uses."""
    import asyncio
    import base64

    from visiongate.adapters._router import Router
    from visiongate.engine import Gate

    sys.path.insert(0, str(HERE))
    from _relay_server import screenshot  # type: ignore[import-not-found]

    data = base64.b64decode(screenshot())
    router = Router(Gate.load(routes=False), cache=tempfile.mkdtemp())
    context = router._context("mcp", "anthropic", "claude-sonnet-4-5")
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        batch = asyncio.run(context.attach([data]))
        times.append(time.perf_counter() - start)
        assert batch.attached, batch
    return statistics.median(times) * 1000


CHECKS: Final = (
    "initialize: the server's identity and capabilities",
    "initialize: the protocol version negotiated",
    "tools/list: the pagination cursor",
    "an unknown method reaches the server",
    "ping",
    "progress notification with the client's token",
    "sampling request relayed, the client's answer returned",
    "cancellation reaches the server",
)


def checks(client: RawClient) -> list[bool]:
    init = client.initialize().get("result", {})
    first = client.request("tools/list").get("result", {})
    second = client.request("tools/list", {"cursor": first.get("nextCursor")}).get("result", {})
    unknown = client.request("vendor/echo", {"x": 1}).get("result", {})
    ping = client.request("ping")
    client.seen.clear()
    client.request(
        "tools/call", {"name": "echo", "arguments": {}, "_meta": {"progressToken": "t1"}}
    )
    progress = any(m.get("params", {}).get("progressToken") == "t1" for m in client.seen)
    client.on_request = lambda request: {
        "role": "assistant",
        "content": {"type": "text", "text": "from-the-client"},
        "model": "m",
    }
    asked = client.request("tools/call", {"name": "ask", "arguments": {}})
    client.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 777}}
    )
    seen = client.request("tools/call", {"name": "cancelled", "arguments": {"id": 777}})
    return [
        init.get("serverInfo", {}).get("name") == "relay-bench"
        and "bench" in init.get("capabilities", {}).get("experimental", {}),
        init.get("protocolVersion") == "2025-06-18",
        first.get("nextCursor") == "page-2"
        and [t["name"] for t in second.get("tools", [])] == ["ask", "shot"],
        unknown.get("method") == "vendor/echo",
        "result" in ping,
        progress,
        "from-the-client" in json.dumps(asked.get("result")),
        "true" in json.dumps(seen.get("result")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--shots", type=int, default=30)
    parser.add_argument("--fastmcp", metavar="PYTHON", help="an interpreter with fastmcp")
    parser.add_argument("--checks", action="store_true")
    parser.add_argument("--startup", type=int, default=0, metavar="N")
    options = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "VISIONGATE_CACHE_DIR": folder, "XDG_STATE_HOME": folder}
        if options.startup:
            startup(options.startup, env)
        commands = {"direct": SERVER, "visiongate": proxy_command(Path(folder) / "trace.jsonl")}
        if options.fastmcp:
            commands["fastmcp"] = fastmcp_command(options.fastmcp)
        if options.checks:
            print(
                f"\nforwarding checks ({', '.join(name for name in commands if name != 'direct')}):"
            )
            results = {}
            for name, command in commands.items():
                client = RawClient(command, env)
                results[name] = checks(client)
                client.close()
            for index, check in enumerate(CHECKS):
                marks = "  ".join(
                    f"{name}={'ok' if results[name][index] else 'FAIL'}" for name in commands
                )
                print(f"  {check:<58} {marks}")
        clients = {name: RawClient(command, env) for name, command in commands.items()}
        for client in clients.values():
            client.initialize()
        if options.calls:
            report(latency(clients, options.calls, "echo"), "tools/call without images")
        if options.shots:
            shots = {name: clients[name] for name in ("direct", "visiongate")}
            times = latency(shots, options.shots, "shot")
            report(times, "tools/call with a 1920x1080 screenshot (PNG)")
            stage = image_stage_ms(max(5, options.shots // 3))
            added = percentiles(times["visiongate"])[0] - percentiles(times["direct"])[0]
            print(
                f"  image stage alone (same image, same target): {stage:.1f} ms median; "
                f"added by the proxy at p50: {added:.1f} ms"
            )
        for client in clients.values():
            client.close()
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
