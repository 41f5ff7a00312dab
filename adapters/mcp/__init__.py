"""The MCP side of the adapters: reading tool results, and a real client and server.

`_wire` is the tool result as the core reads it (the MCP wire shape, no SDK), `_edge` reads
any result into it (either SDK generation, wire dicts, objects with the same fields), and
`_blocks` turns it into text, found images and notes, with `_inline` and `_copies` finding the
images inside structured content, `_meta` and text, `_text` reading text blobs, and `_schemas`
checking (and widening) output schemas. `_client` calls a tool on a server over
stdio and routes the result; `example_server` is the project's own screenshot server
(`python -m visiongate.adapters.mcp.example_server`). Those two, `_session` and `_stdio` are
built on the official SDK's 2.x API (the `mcp` extra; `_sdk` says so when it is missing).
"""
