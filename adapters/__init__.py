"""Carry out the gate's lane for each image source; process and sanitize untrusted output.

The public surface is small: the `Router` an agent embeds, what it returns, the payload
renderer, the image cache, the MCP client call, the sanitizer and the auxiliary vision entry
points. Everything else lives in private modules.

The routing core speaks the MCP wire shape and imports no MCP SDK; only the client that talks
to servers does (`call_mcp_tool`, `call_and_route`: `pip install 'visiongate[mcp]'`), and it
is imported when first used, so `import visiongate.adapters` works next to any SDK version.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from ._cache import ImageCache
    from ._routed import RoutedResult
    from ._router import Router
    from .images import ImageTarget, ProcessedImage, RefusedImage, process_image, process_images
    from .mcp._client import call_and_route, call_mcp_tool
    from .payloads import API_NAMES, Payload, render_payload, render_turn
    from .sanitize import Sanitizer
    from .vision import (
        Description,
        DescriptionNote,
        VisionBackend,
        VisionUnavailable,
        backend_from_config,
    )

# Names are imported on first use (PEP 562), as in `visiongate.engine`: importing any submodule
# runs this file first, and the proxy's relay must not pay for the image stage, the payload
# renderers and the vision backends (about 0.3 s) before it can answer `initialize`.
_HOMES: dict[str, str] = {
    "ImageCache": "._cache",
    "RoutedResult": "._routed",
    "Router": "._router",
    "ImageTarget": ".images",
    "ProcessedImage": ".images",
    "RefusedImage": ".images",
    "process_image": ".images",
    "process_images": ".images",
    "API_NAMES": ".payloads",
    "Payload": ".payloads",
    "render_payload": ".payloads",
    "render_turn": ".payloads",
    "Sanitizer": ".sanitize",
    "Description": ".vision",
    "DescriptionNote": ".vision",
    "VisionBackend": ".vision",
    "VisionUnavailable": ".vision",
    "backend_from_config": ".vision",
}

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
    "render_turn",
]

_CLIENT_NAMES = ("call_and_route", "call_mcp_tool")


_lazy_getattr, __dir__ = lazy_names(__name__, _HOMES, __all__)


def __getattr__(name: str) -> Any:
    """Names on first use; the MCP client's functions need the `mcp` SDK."""
    if name in _CLIENT_NAMES:
        from .mcp._sdk import require_client_sdk

        require_client_sdk()
        return getattr(importlib.import_module(".mcp._client", __name__), name)
    return _lazy_getattr(name)
