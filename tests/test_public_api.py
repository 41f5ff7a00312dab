"""The public surface is exactly the intended names (httpx keeps such a test)."""

from __future__ import annotations

import visiongate.adapters


def test_adapters_export_exactly_the_intended_names() -> None:
    assert sorted(visiongate.adapters.__all__) == sorted(
        [
            "API_NAMES", "Description", "DescriptionNote", "ImageCache", "ImageTarget",
            "Payload", "ProcessedImage", "RefusedImage", "RoutedResult", "Router", "Sanitizer",
            "VisionBackend", "VisionUnavailable", "backend_from_config", "call_and_route",
            "call_mcp_tool", "process_image", "process_images", "render_payload", "render_turn",
        ]
    )  # fmt: skip
    for name in visiongate.adapters.__all__:
        assert getattr(visiongate.adapters, name) is not None
