"""The MCP side of the adapters: reading tool results, and a real client and server.

`_blocks` reads a `CallToolResult` into text, found images and notes; `_client` calls a tool
on a server over stdio and routes the result; `example_server` is the project's own
screenshot server (`python -m visiongate.adapters.mcp.example_server`).
"""
