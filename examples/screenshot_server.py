"""Run visiongate's example MCP server over stdio: `python examples/screenshot_server.py`.

The server itself lives in the package (`visiongate.adapters.mcp.example_server`) so it also
runs from an installed visiongate as `python -m visiongate.adapters.mcp.example_server`.
"""

from visiongate.adapters.mcp.example_server import main

if __name__ == "__main__":
    main()
