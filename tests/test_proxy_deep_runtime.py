"""A local runtime answering JSON nested 100,000 deep costs the proxy nothing (issue 36, item 7).

Regression: an Ollama `/api/show` nested that deep raised a RecursionError in the decision,
and every proxied call then failed. Here the real proxy runs in front of the example server
with the target at such a runtime: each call is answered, on the text lane, and the reason
is one line in the record.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml
from _proxy_helpers import proxied, read_trace
from _proxy_helpers import warm_proxy_argv as proxy_argv
from _routing_helpers import loopback_server, without_proxies
from _warm import server_command
from mcp.types import ImageContent

pytestmark = pytest.mark.anyio
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Deep(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(DEEP)))
        self.end_headers()
        self.wfile.write(DEEP)


async def test_every_call_is_answered_when_the_runtime_answers_deep_json(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    with without_proxies(), loopback_server(_Deep) as port:
        config = tmp_path / "agent.yaml"
        config.write_text(
            yaml.safe_dump(
                {"model": {"provider": "ollama", "base_url": f"http://127.0.0.1:{port}"}}
            )
        )
        target = ["--provider", "ollama", "--model", "llava"]
        argv = proxy_argv(
            server_command(), "--config", str(config), "--trace", str(trace), target=target
        )
        async with proxied(argv, tmp_path) as session:
            for _ in range(2):
                result = await session.call_tool("screenshot", {})
                assert not result.is_error
                assert not [block for block in result.content if isinstance(block, ImageContent)]
    records = read_trace(trace)
    assert [record["lane"] for record in records] == ["text", "text"]
    said = records[0]["provenance"]["catalog"]
    # Under a heavy load the 0.75 s deadline may end the 200 kB answer first: bounded either way.
    assert "answered JSON nested deeper than 64 levels" in said or "no complete answer" in said
    log = (tmp_path / "proxy.log").read_text()
    assert "Traceback" not in log and "RecursionError" not in log
