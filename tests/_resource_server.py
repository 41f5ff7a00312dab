"""An MCP server (the official SDK's `MCPServer`, stdio) whose resources are images, for the
proxy's tests of `resources/read` (issue 34).

    python tests/_resource_server.py

| resource          | contents                                                              |
|-------------------|-----------------------------------------------------------------------|
| `screen://shot`   | a 1600x1000 PNG of noise (about 4.8 MB of base64: over the desktop    |
|                   | client's 1 MB limit unless it is fitted)                              |
| `screen://broken` | a text content, then a PNG blob whose data end after the signature    |
| `screen://logo`   | an SVG blob (not a raster image: passes as it came)                   |
"""

from __future__ import annotations

if __name__ == "__main__":  # not part of the example: see `visiongate.kernel._exit`
    from visiongate.kernel._exit import skip_teardown

    skip_teardown()  # before the SDK loads, so that its own exit handlers run first

import io
from collections.abc import Iterable
from typing import Any

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer
from PIL import Image

BROKEN_TEXT = "the capture of the second screen follows"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'


def busy_png(width: int = 1600, height: int = 1000) -> bytes:
    picture = Image.effect_noise((width, height), 64).convert("RGB")
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    return buffer.getvalue()


class ImageResources(MCPServer):
    """`screen://broken` answers two contents, which a resource function cannot return."""

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        if str(uri) == "screen://broken":
            broken: Iterable[ReadResourceContents] = [
                ReadResourceContents(content=BROKEN_TEXT, mime_type="text/plain"),
                ReadResourceContents(content=b"\x89PNG\r\n\x1a\nbroken", mime_type="image/png"),
            ]
            return broken
        return await super().read_resource(uri, context)


def build_server() -> MCPServer:
    server = ImageResources("image-resources")

    @server.resource("screen://shot", mime_type="image/png")
    def shot() -> bytes:
        """The screen."""
        return busy_png()

    @server.resource("screen://broken", mime_type="image/png")
    def broken() -> bytes:
        """Never read: `ImageResources.read_resource` answers for it."""
        return b""

    @server.resource("screen://logo", mime_type="image/svg+xml")
    def logo() -> bytes:
        """A vector logo."""
        return SVG

    return server


if __name__ == "__main__":
    from visiongate.kernel._exit import returned

    build_server().run()
    returned(0)  # then no teardown of the SDK's models (about 260 ms of CPU)
