"""Reading one large message from an MCP server over stdio: the SDK's reader against ours.

Run: python bench/bench_mcp_stdio.py [--sdk-max-mb 16] [--ours-max-mb 64]

A child process writes one JSON-RPC response of N MB on a single line; each transport reads
and parses it into a `SessionMessage`. The SDK's `stdio_client` joins each chunk onto the
unfinished line and splits again (time quadratic in the line); `bounded_stdio` looks for the
newline only in the new chunk (linear). Printed: seconds per size, MB/s, and the ratio
SDK/ours where both ran. Sizes double; the SDK stops at `--sdk-max-mb` because its time grows
fourfold per doubling.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

import anyio
from mcp import StdioServerParameters, stdio_client

from visiongate.adapters.mcp._stdio import bounded_stdio

MB: Final = 1024 * 1024
WRITER: Final = (
    "import sys, json; n = int(sys.argv[1]); "
    'sys.stdout.write(\'{"jsonrpc": "2.0", "id": 1, "result": {"content": '
    '[{"type": "text", "text": "\' + \'a\' * n + \'"}]}}\\n\'); sys.stdout.flush(); '
    "sys.stdin.read()"
)

Opener = Callable[[StdioServerParameters], AbstractAsyncContextManager[Any]]


def _sdk(parameters: StdioServerParameters) -> AbstractAsyncContextManager[Any]:
    return stdio_client(parameters)


def _ours(parameters: StdioServerParameters) -> AbstractAsyncContextManager[Any]:
    return bounded_stdio(parameters, label="bench", max_message_bytes=1024 * MB)


async def _read_one(opener: Opener, size: int) -> float:
    parameters = StdioServerParameters(command=sys.executable, args=["-c", WRITER, str(size)])
    async with opener(parameters) as streams:
        read = streams[0]
        started = time.perf_counter()
        message = await read.receive()
        elapsed = time.perf_counter() - started
    text = message.message.result["content"][0]["text"]
    if len(text) != size:
        raise AssertionError(f"read {len(text)} characters, expected {size}")
    return elapsed


def _sizes(largest_mb: int) -> list[int]:
    sizes = []
    mb = 2
    while mb <= largest_mb:
        sizes.append(mb)
        mb *= 2
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdk-max-mb", type=int, default=16)
    parser.add_argument("--ours-max-mb", type=int, default=64)
    args = parser.parse_args()
    print(f"{'size':>8} {'sdk s':>9} {'ours s':>9} {'ours MB/s':>10} {'sdk/ours':>9}")
    for mb in _sizes(max(args.sdk_max_mb, args.ours_max_mb)):
        ours = anyio.run(_read_one, _ours, mb * MB) if mb <= args.ours_max_mb else None
        sdk = anyio.run(_read_one, _sdk, mb * MB) if mb <= args.sdk_max_mb else None
        ratio = f"{sdk / ours:>8.1f}x" if sdk is not None and ours is not None else f"{'-':>9}"
        sdk_text = f"{sdk:>9.2f}" if sdk is not None else f"{'-':>9}"
        ours_text = f"{ours:>9.2f}" if ours is not None else f"{'-':>9}"
        rate = f"{mb / ours:>10.0f}" if ours else f"{'-':>10}"
        print(f"{mb:>6}MB {sdk_text} {ours_text} {rate} {ratio}", flush=True)


if __name__ == "__main__":
    main()
