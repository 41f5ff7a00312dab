"""Which MCP SDK is installed, for the parts that talk to servers.

The routing core reads results in the wire shape and needs no SDK. The client (`mcp call`,
`call_mcp_tool`, the demo) and the example server are built on the official SDK's 2.x API
(`MCPServer`, `MCPError`, snake_case models) and come with `pip install 'visiongate[mcp]'`;
next to a 1.x SDK they say so in one line instead of failing on an import deep inside.
"""

from __future__ import annotations

from importlib import metadata
from typing import Final

from visiongate.kernel._errors import VisiongateError

__all__ = ["CLIENT_SDK", "McpSdkMissing", "missing_sdk_message", "require_client_sdk"]

CLIENT_SDK: Final = "mcp>=2.3,<3"
_HINT: Final = "install it with `pip install 'visiongate[mcp]'`"


class McpSdkMissing(VisiongateError, ImportError):
    """The MCP client or example server was used without the SDK version it is built on."""


def installed_version() -> str | None:
    try:
        return metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return None


def require_client_sdk() -> None:
    """Raise `McpSdkMissing` unless an `mcp` SDK 2.x is installed."""
    version = installed_version()
    if version is None:
        raise McpSdkMissing(f"the mcp client needs the official `mcp` sdk ({CLIENT_SDK}); {_HINT}")
    if not version.split(".", 1)[0].isdigit() or int(version.split(".", 1)[0]) < 2:
        raise McpSdkMissing(
            f"the mcp client needs the official `mcp` sdk 2.x ({CLIENT_SDK}), and `{version}` "
            f"is installed; {_HINT} (routing results works with any version)"
        )


def missing_sdk_message(error: ImportError) -> str | None:
    """The one-line message for an import that failed for want of the SDK, else None."""
    if isinstance(error, McpSdkMissing):
        return str(error)
    name = error.name or ""
    if name != "mcp" and not name.startswith("mcp."):
        return None
    try:
        require_client_sdk()
    except McpSdkMissing as missing:
        return str(missing)
    return None
