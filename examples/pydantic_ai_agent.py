"""visiongate inside a pydantic-ai agent: MCP tool results routed before the model sees them.

`VisionGatedToolset` is pydantic-ai's `MCPToolset` with one method replaced: each tool result
(the FastMCP client's own result type, passed to `router.mcp` as it is) goes through the gate,
and the model gets the routed text plus, in the native lane only, the fitted images. A model
that reads images gets the screenshot as an image; a text-only one gets its `MEDIA:` path.

    python examples/pydantic_ai_agent.py     # offline: pydantic-ai's FunctionModel stands in

Copy `VisionGatedToolset` and give it your real model's provider and model names.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent, BinaryImage
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from visiongate.adapters import Router
from visiongate.adapters.mcp.example_server import server_command
from visiongate.engine import Gate

Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


class VisionGatedToolset(MCPToolset):
    """An MCP toolset whose tool results are routed by visiongate for `provider`/`model`."""

    def __init__(self, command: list[str], router: Router, provider: str, model: str) -> None:
        super().__init__(StdioTransport(command[0], command[1:]))
        self.router, self.provider, self.model = router, provider, model

    async def direct_call_tool(
        self, name: str, args: dict[str, Any], *, metadata: Any = None, use_task: bool = False
    ) -> Any:
        async with self:  # connected for the call (the agent run usually is already)
            result = await self.client.call_tool(name, args, meta=metadata, raise_on_error=False)
        routed = await self.router.mcp(
            result, provider=self.provider, model=self.model, tool_name=name
        )
        images = [BinaryImage(data=i.data, media_type=i.media_type) for i in routed.images]
        return [routed.text, *images] if images else routed.text


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for a real model: asks for a screenshot, then says what reached it."""
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("screenshot", {})])
    last = messages[-1]
    images = [
        item
        for part in last.parts
        for item in (part.content if isinstance(part.content, list) else [part.content])
        if isinstance(item, BinaryImage)
    ]
    return ModelResponse(parts=[TextPart(f"I got {len(images)} image(s) from the tool")])


async def main(provider: str, model: str, respond: Respond = scripted_model) -> str:
    router = Router(Gate.load())
    toolset = VisionGatedToolset(server_command(), router, provider, model)
    agent = Agent(FunctionModel(respond), toolsets=[toolset])
    async with agent:
        result = await agent.run("What is on the screen?")
    return result.output


if __name__ == "__main__":
    provider, model = sys.argv[1:3] if len(sys.argv) > 2 else ("anthropic", "claude-sonnet-4-5")
    print(asyncio.run(main(provider, model)))
