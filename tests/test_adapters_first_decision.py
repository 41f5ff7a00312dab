"""The first decision of a process loads the catalog and registry off the event loop (issue 36,
item 11): 80-260 ms during which every other task of the loop, an MCP server's I/O among
them, would wait."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from visiongate.adapters import Router
from visiongate.engine import Gate


@pytest.fixture
def gate_recording_its_loader() -> tuple[Gate, list[str]]:
    gate = Gate.load()
    threads: list[str] = []
    load = gate._make_resolver
    assert load is not None, "the bundled catalog and registry load on first need"

    def recorded() -> Any:
        threads.append(threading.current_thread().name)
        return load()

    gate._make_resolver = recorded
    return gate, threads


def test_the_first_routed_result_loads_the_facts_off_the_event_loop(
    gate_recording_its_loader: tuple[Gate, list[str]], tmp_path: Path
) -> None:
    """Regression: `Router.mcp` decided on the loop's thread, loading the facts there."""
    gate, threads = gate_recording_its_loader
    router = Router(gate, cache=tmp_path)
    result = {"content": [{"type": "text", "text": "ok"}], "isError": False}

    async def route_twice() -> str:
        loop_thread = threading.current_thread().name
        for _ in range(2):
            await router.mcp(result, provider="anthropic", model="claude-sonnet-4-5")
        return loop_thread

    loop_thread = asyncio.run(route_twice())
    assert len(threads) == 1 and threads[0] != loop_thread, (threads, loop_thread)


def test_a_large_text_result_is_sanitized_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 37): a result of megabytes of hostile text was sanitized on the loop's
    thread, so one such result stalled every other session of a proxy or gateway; a small
    one stays on the loop (less than the hop to a thread)."""
    from visiongate.adapters.sources import _mcp

    threads: list[str] = []
    sanitize = _mcp.sanitize_call_tool_result

    def recorded(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        return sanitize(*args)

    monkeypatch.setattr(_mcp, "sanitize_call_tool_result", recorded)
    router = Router(Gate.load(), cache=tmp_path)
    hostile = "Снимок\u200b экрана\U000e0041 " * (_mcp.OFF_LOOP_TEXT_CHARS // 10)

    async def route(texts: list[str]) -> str:
        for text in texts:
            result = {"content": [{"type": "text", "text": text}], "isError": False}
            routed = await router.mcp(result, provider="anthropic", model="claude-sonnet-4-5")
            assert "\u200b" not in routed.text
        return threading.current_thread().name

    loop_thread = asyncio.run(route(["small\u200b text", hostile]))
    assert threads[0] == loop_thread and threads[1] != loop_thread, (threads, loop_thread)
