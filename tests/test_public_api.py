"""The public surface is exactly the intended names (httpx keeps such a test)."""

from __future__ import annotations

import pytest

import visiongate.adapters
from visiongate.adapters.mcp._sdk import McpSdkMissing, require_client_sdk


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
        assert name in CLIENT or getattr(visiongate.adapters, name) is not None


CLIENT = ("call_and_route", "call_mcp_tool")


@pytest.mark.parametrize("name", CLIENT)
def test_the_mcp_client_needs_the_sdk_it_is_built_on(name: str) -> None:
    # The routing core imports with any SDK; the client says in one line what it needs.
    try:
        require_client_sdk()
    except McpSdkMissing as missing:
        with pytest.raises(McpSdkMissing, match="pip install 'visiongate\\[mcp\\]'"):
            getattr(visiongate.adapters, name)
        assert "sdk" in str(missing)
    else:
        assert callable(getattr(visiongate.adapters, name))


def test_the_top_level_facade_exports_exactly_the_everyday_names() -> None:
    import visiongate
    import visiongate.engine

    assert sorted(visiongate.__all__) == sorted(
        [
            "CompiledPolicy", "Decision", "FactError", "Gate", "ImageCache", "JsonlTrace",
            "Payload", "PolicyError", "RoutedResult", "Router", "Sanitizer", "VisiongateError",
            "__version__", "load_policy",
        ]
    )  # fmt: skip
    for name in visiongate.__all__:
        if name == "__version__":
            continue
        home = visiongate.engine if name in visiongate.engine.__all__ else visiongate.adapters
        assert getattr(visiongate, name) is getattr(home, name), name
    with pytest.raises(AttributeError, match="no attribute 'Gat'"):
        visiongate.Gat  # noqa: B018


def test_importing_the_facade_loads_neither_stage() -> None:
    # `from visiongate import Gate` pays for the engine; `import visiongate` (and so
    # `visiongate --help`) pays for nothing.
    import subprocess
    import sys

    probe = "import sys, visiongate; print(sorted(m for m in sys.modules if 'visiongate.' in m))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert (
        done.stdout.strip() == "['visiongate.kernel', 'visiongate.kernel._lazy']"
    )  # a dozen lines, no stage
