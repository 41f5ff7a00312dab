"""The four image sources, each carrying out the gate's lane in its own way.

`_mcp` (MCP `ImageContent` in tool results), `_screenshots` (computer-use and browser
captures), `_analyze` (`vision_analyze`); `_lane` is what they share: one decision and what
carrying it out needs. None of them decides a lane.
"""

from ._analyze import route_vision_analyze
from ._lane import LaneContext
from ._mcp import route_mcp
from ._screenshots import route_screenshot

__all__ = ["LaneContext", "route_mcp", "route_screenshot", "route_vision_analyze"]
