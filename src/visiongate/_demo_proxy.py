"""The demo's proxy scenario: an MCP client that knows nothing of visiongate, in front of the
example server through `visiongate proxy`, with the desktop client's 1 MB message limit.

The client is the official SDK's (through the project's bounded session); the proxy is a real
`visiongate proxy` process, which starts the example server itself. What the client sees is
what any MCP client would: cleaned tool listings, a fitted screenshot, no message over 1 MB.
Its decision records go to `proxy-trace.jsonl` in the demo's output folder.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from PIL import Image

from visiongate.adapters.mcp._session import McpLimits, open_session
from visiongate.adapters.mcp.example_server import server_command

TARGET: Final = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")
CLIENT: Final = "claude-desktop"
TAG_RANGE: Final = range(0xE0000, 0xE0080)
_PASSED_ON: Final = (
    "VISIONGATE_CACHE_DIR",
    "VISIONGATE_POLICY_CACHE",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
)


@dataclass(frozen=True)
class ProxyOutcome:
    tools: int
    hidden_in_listing: int
    """Tag characters the client would have read in the tool listing without the proxy."""
    image: tuple[int, int]
    message_bytes: int
    trace: Path

    def lines(self) -> list[str]:
        width, height = self.image
        return [
            f"  tools/list: {self.tools} tools, {self.hidden_in_listing} hidden characters reach "
            "the client (the example server hides them in its `smuggle` tool's description)",
            f"  screenshot: text and a {width}x{height} image in a {self.message_bytes:,}-byte "
            f"answer (the {CLIENT} limit is 1,000,000 bytes; the server sent 2560x1440)",
            f"  records: {self.trace}",
            f"  try it in a client: visiongate proxy --print-config {CLIENT} "
            f"{' '.join(TARGET)} -- <your server command>",
        ]


def proxy_command(trace: Path) -> list[str]:
    return [
        sys.executable, "-m", "visiongate", "proxy", *TARGET, "--client", CLIENT,
        "--trace", str(trace), "--", *server_command(),
    ]  # fmt: skip


async def run_proxy_scenario(
    out: Path, stream: TextIO = sys.stderr, limits: McpLimits | None = None
) -> ProxyOutcome:
    """List the tools and take a screenshot through `visiongate proxy`."""
    trace = out / "proxy-trace.jsonl"
    trace.unlink(missing_ok=True)
    print(f"  through `visiongate proxy --client {CLIENT}` (an MCP client's view)", file=stream)
    # The SDK gives a server only the basic environment: pass on where visiongate keeps files.
    kept = {name: os.environ[name] for name in _PASSED_ON if name in os.environ}
    async with open_session(proxy_command(trace), env=kept, limits=limits) as session:
        listing = await session.list_tools()
        shot = await session.call_tool("screenshot", {})
    dumped = json.dumps(listing.model_dump(by_alias=True, mode="json"), ensure_ascii=False)
    images = [block for block in shot.content if block.type == "image"]
    size = (0, 0)
    if images:
        with Image.open(io.BytesIO(base64.b64decode(images[0].data))) as image:
            size = image.size
    answer = json.dumps(shot.model_dump(by_alias=True, mode="json", exclude_none=True))
    return ProxyOutcome(
        tools=len(listing.tools),
        hidden_in_listing=sum(ord(char) in TAG_RANGE for char in dumped),
        image=size,
        message_bytes=len(answer.encode()),
        trace=trace,
    )
