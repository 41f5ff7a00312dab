"""An agent loop on the official `mcp` SDK with visiongate between the tools and the model.

`agent_loop` is the whole integration, about twenty lines: tool listings sanitized before the
model reads them, each tool result routed by the gate, one assistant turn's results rendered
together (`render_turn`), and the history bounded before every request (`bound_history`).
`ask_model(messages, tools)` is your model call in the `api` shape; it returns the assistant
message and the tool calls in it as `(call_id, name, arguments)`.

    python examples/mcp_agent_loop.py [PROVIDER MODEL]   # offline: a scripted model stands in
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from visiongate.adapters import Router
from visiongate.adapters.mcp.example_server import server_command
from visiongate.engine import Gate

Call = tuple[str, str, dict[str, Any]]
AskModel = Callable[[list[dict[str, Any]], list[Any]], Awaitable[tuple[dict[str, Any], list[Call]]]]


async def agent_loop(ask: AskModel, provider: str, model: str, api: str = "anthropic") -> Any:
    router = Router(Gate.load())
    command = server_command()
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = router.sanitize_tools(await session.list_tools()).tools
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is on the screen?"}]
        while True:
            reply, calls = await ask(router.bound_history(messages, api).messages, tools)
            messages.append(reply)
            if not calls:
                return reply["content"]
            turn = []
            for call_id, name, arguments in calls:
                result = await session.call_tool(name, arguments)
                routed = await router.mcp(
                    result, provider=provider, model=model, tool_name=name, api=api
                )
                turn.append((routed, call_id, name))
            messages += router.render_turn(turn, api).messages


async def scripted_model(
    messages: list[dict[str, Any]], tools: list[Any]
) -> tuple[dict[str, Any], list[Call]]:
    """Stands in for a real model (Anthropic shape): one screenshot, then what reached it."""
    if len(messages) == 1:
        use = {"type": "tool_use", "id": "call_1", "name": "screenshot", "input": {}}
        return {"role": "assistant", "content": [use]}, [("call_1", "screenshot", {})]
    results = messages[-1]["content"]
    images = sum(block["type"] == "image" for result in results for block in result["content"])
    return {"role": "assistant", "content": f"I got {images} image(s) from the tool"}, []


if __name__ == "__main__":
    provider, model = sys.argv[1:3] if len(sys.argv) > 2 else ("anthropic", "claude-sonnet-4-5")
    print(asyncio.run(agent_loop(scripted_model, provider, model)))
