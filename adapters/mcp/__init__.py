"""The MCP client and server side, above the router: a real client and the example server.

`_client` calls a tool on a server over stdio and routes the result; `example_server` is the
project's own screenshot server (`python -m visiongate.adapters.mcp.example_server`). Those
two, `_session` and `_stdio` are built on the official SDK's 2.x API (the `mcp` extra; `_sdk`
says so when it is missing); `_child` and `_pipes` start a server and carry its pipes. What
they read, the tool result in the wire shape, is `adapters/wire/`'s.
"""
