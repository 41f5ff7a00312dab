"""The demo's proxy scenario: an MCP client through a real `visiongate proxy` (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _proxy_helpers import read_trace

from visiongate._demo_proxy import TAG_RANGE, run_proxy_scenario
from visiongate.adapters.mcp.example_server import build_server

# slow: a real `visiongate proxy` and server, started by the demo's code
pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_proxy_scenario_cleans_fits_and_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path / "images"))
    outcome = await run_proxy_scenario(tmp_path)
    assert outcome.tools >= 9 and outcome.hidden_in_listing == 0
    # ... where the server did hide some: what the proxy removed was there.
    listing = await build_server().list_tools()
    assert sum(ord(char) in TAG_RANGE for tool in listing for char in tool.description or "")
    assert outcome.image == (1568, 882) and outcome.message_bytes < 1_000_000
    (record,) = read_trace(outcome.trace)
    assert record["execution"]["tool_name"] == "screenshot"
    assert record["proxy"]["max_result_bytes"] == 1_000_000
    assert any("hidden characters" in line for line in outcome.lines())
