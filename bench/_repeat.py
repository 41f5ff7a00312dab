"""A repeated screenshot through `visiongate proxy`: routing time of the first call and later.

The proxy runs in front of `_shot_server.py` with a trace; each record's `proxy.route_ms` is
the routing time of that call (from the server's answer to the routed result). A different
screenshot goes first, so the first call of the measured one pays for fitting it, not for
warming the process up; then the same screenshot is called again `repeats` times.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _pages import encoded
from _screens import screenshot

HERE = Path(__file__).resolve().parent


def _call(process: subprocess.Popen[bytes], request_id: int, method: str, params: Any) -> None:
    assert process.stdin is not None and process.stdout is not None
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    while line := process.stdout.readline():
        if json.loads(line).get("id") == request_id:
            return
    raise ConnectionError("the proxy ended before it answered")


def repeated_screenshot(size: tuple[int, int], repeats: int) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for seed in (11, 12):
            path = Path(folder) / f"shot-{seed}.png"
            path.write_bytes(encoded(screenshot(*size, seed=seed)))
            files.append(str(path))
        trace = Path(folder) / "trace.jsonl"
        command = [
            sys.executable, "-m", "visiongate", "proxy",
            "--provider", "anthropic", "--model", "claude-sonnet-4-5",
            "--trace", str(trace), "--cache-dir", str(Path(folder) / "cache"),
            "--", sys.executable, str(HERE / "_shot_server.py"), *files,
        ]  # fmt: skip
        environment = {**os.environ, "VISIONGATE_CACHE_DIR": str(Path(folder) / "cache")}
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment
        )
        _call(process, 1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
        calls = [0] + [1] * (repeats + 1)
        for index, which in enumerate(calls, start=2):
            _call(process, index, "tools/call", {"name": "shot", "arguments": {"which": which}})
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=60)
        records = [json.loads(line) for line in trace.read_text().splitlines()]
    routes = [record["proxy"]["route_ms"] for record in records if "proxy" in record]
    first, later = routes[1], routes[2:]
    median = statistics.median(later)
    return [
        f"repeated {size[0]}x{size[1]} screenshot through `visiongate proxy` (PNG, "
        f"{len(later)} repeats)",
        f"  routing time: first {first:.1f} ms, later calls median {median:.1f} ms, "
        f"max {max(later):.1f} ms; ratio {median / first:.3f}x (goal <= 0.10x)",
    ]
