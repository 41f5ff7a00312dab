"""visiongate inside an openai-agents agent: MCP tool results routed before the model sees them.

`VisionGatedServer` is openai-agents' `MCPServerStdio` with `call_tool` replaced: each result
goes through the gate, and the framework gets back an MCP result holding the routed text and,
in the native lane only, the fitted images (`RoutedResult.to_mcp()`); it renders that for the
model as it renders any MCP result. Tool listings are sanitized too (`list_tools`).

The model speaks the Responses API (openai-agents' default), whose `function_call_output`
takes images, so results are routed for `openai-responses`. On Chat Completions the framework
drops the images of a tool message (that API's tool messages are text only): there, route
with `router.mcp_text(...)` and return its string, so the record says no pixels were sent.

    python examples/openai_agents_agent.py BASE_URL [PROVIDER MODEL]

BASE_URL is any OpenAI-compatible `/v1` endpoint; the tests point it at a loopback server.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from agents import Agent, OpenAIResponsesModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio
from mcp.types import CallToolResult, Tool
from openai import AsyncOpenAI

from visiongate.adapters import Router
from visiongate.adapters.mcp.example_server import server_command
from visiongate.engine import Gate


class VisionGatedServer(MCPServerStdio):
    """An MCP server whose tool results are routed by visiongate for `provider`/`model`."""

    def __init__(self, command: list[str], router: Router, provider: str, model: str) -> None:
        super().__init__({"command": command[0], "args": command[1:]}, name="screens")
        self.router, self.provider, self.model = router, provider, model

    async def list_tools(self, *args: Any, **kwargs: Any) -> list[Tool]:
        return self.router.sanitize_tools(await super().list_tools(*args, **kwargs))

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        result = await super().call_tool(tool_name, arguments, meta)
        routed = await self.router.mcp(
            result,
            provider=self.provider,
            model=self.model,
            tool_name=tool_name,
            api="openai-responses",
        )
        return CallToolResult.model_validate(routed.to_mcp())


async def main(base_url: str, provider: str, model: str) -> str:
    set_tracing_disabled(True)  # no trace export: the only network peer is `base_url`
    client = AsyncOpenAI(base_url=base_url, api_key="unused-by-the-loopback-server")
    async with VisionGatedServer(server_command(), Router(Gate.load()), provider, model) as server:
        agent = Agent(
            name="screen reader",
            instructions="Take a screenshot and say what you see.",
            model=OpenAIResponsesModel(model=model, openai_client=client),
            mcp_servers=[server],
        )
        result = await Runner.run(agent, "What is on the screen?")
    return str(result.final_output)


if __name__ == "__main__":
    url, *target = sys.argv[1:]
    provider, model = target if target else ("openai", "gpt-5")
    print(asyncio.run(main(url, provider, model)))
