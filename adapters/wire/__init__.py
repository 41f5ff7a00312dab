"""The MCP wire reader, below the router: a tool result as the core reads it, no SDK.

`_wire` is the tool result as the core reads it (the MCP wire shape), `_edge` reads any result
into it (either SDK generation, wire dicts, objects with the same fields), and `_blocks` turns
it into text, found images and notes, with `_inline` and `_copies` finding the images inside
structured content, `_meta` and text, `_text` reading text blobs, and `_schemas` checking (and
widening) output schemas. Nothing here imports the router or the MCP client above it
(`adapters/mcp/`).
"""
