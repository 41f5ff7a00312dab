"""Carry out the gate's lane for each image source; process and sanitize untrusted output.

The public surface is small: the `Router` an agent embeds, what it returns, the payload
renderer, the image cache, the MCP client call, the sanitizer and the auxiliary vision entry
points. Everything else lives in private modules.
"""

from ._cache import ImageCache
from ._routed import RoutedResult
from ._router import Router
from .images import ImageTarget, ProcessedImage, RefusedImage, process_image, process_images
from .mcp._client import call_and_route, call_mcp_tool
from .payloads import API_NAMES, Payload, render_payload
from .sanitize import Sanitizer
from .vision import (
    Description,
    DescriptionNote,
    VisionBackend,
    VisionUnavailable,
    backend_from_config,
)

__all__ = [
    "API_NAMES",
    "Description",
    "DescriptionNote",
    "ImageCache",
    "ImageTarget",
    "Payload",
    "ProcessedImage",
    "RefusedImage",
    "RoutedResult",
    "Router",
    "Sanitizer",
    "VisionBackend",
    "VisionUnavailable",
    "backend_from_config",
    "call_and_route",
    "call_mcp_tool",
    "process_image",
    "process_images",
    "render_payload",
]
