"""FastMCP's proxy in front of a stdio server, for `bench_proxy.py --fastmcp PYTHON`.

    PYTHON bench/_fastmcp_proxy.py SERVER COMMAND ...

Run with an interpreter that has `fastmcp` installed (it is not a dependency of visiongate).
"""

from __future__ import annotations

import sys

from fastmcp.client.transports import StdioTransport  # type: ignore[import-not-found]
from fastmcp.server import create_proxy  # type: ignore[import-not-found]


def main() -> None:
    command, *arguments = sys.argv[1:]
    proxy = create_proxy(StdioTransport(command=command, args=arguments), name="fastmcp-proxy")
    proxy.run(transport="stdio", show_banner=False)


if __name__ == "__main__":
    main()
