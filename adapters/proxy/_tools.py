"""What `tools/list` taught the proxy, and what the client is listed.

Every page of `tools/list` passes through here (the listing's cursors untouched): each tool's
`outputSchema` is remembered, since the client validates a tool's results against the schema
it was listed, and widened where routing could break it (`wire._schemas`); a schema routing
cannot break passes as the server wrote it. The proxy's own tool (`_view`) is appended to the
last page (the one without `nextCursor`), unless the server lists a tool of that name.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ._view import VIEW_TOOL, view_tool_definition

if TYPE_CHECKING:  # jsonschema loads with the first listing that has an output schema
    from ..wire._schemas import Relaxed

__all__ = ["ToolListing"]

_SCHEMAS_KEPT: Final = 10_000


class ToolListing:
    """The output schemas of the tools listed so far, and whether the proxy's tool is offered."""

    def __init__(self, *, offer_view: bool) -> None:
        self._schemas: dict[str, Relaxed | None] = {}
        self._offer_view = offer_view

    def knows(self, tool: str) -> bool:
        """True once a listing named `tool`."""
        return tool in self._schemas

    def assume_unlisted(self, tool: str) -> None:
        """A tool the server's own listing did not name: it declares no output schema (until
        a listing says otherwise), and is not looked up again."""
        if tool not in self._schemas:
            self._remember(tool, None)

    def schema(self, tool: str | None) -> Relaxed | None:
        """The tool's output schema as the client was listed it (None: it declares none)."""
        return self._schemas.get(tool or "")

    def listed(self, listing: Any) -> Any:
        """The page as the client gets it; `listing` itself when nothing changed."""
        tools = listing.get("tools") if isinstance(listing, Mapping) else None
        if not isinstance(tools, list):
            return listing
        listed = [self._listed(tool) for tool in tools]
        if self._offer_view and listing.get("nextCursor") is None:
            listed.append(view_tool_definition())
        if len(listed) == len(tools) and all(a is b for a, b in zip(listed, tools, strict=True)):
            return listing
        return {**listing, "tools": listed}

    def is_local(self, params: Any) -> bool:
        """True when a `tools/call` with `params` calls the proxy's own tool."""
        return self._offer_view and isinstance(params, Mapping) and params.get("name") == VIEW_TOOL

    def _listed(self, tool: Any) -> Any:
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
            return tool
        name = tool["name"]
        if name == VIEW_TOOL and self._offer_view:
            self._offer_view = False
            print(
                f"visiongate proxy: the MCP server has a tool named `{VIEW_TOOL}`; the proxy's "
                "own is not offered",
                file=sys.stderr,
                flush=True,
            )
        schema = tool.get("outputSchema")
        relaxed = _relaxed(schema) if isinstance(schema, Mapping) else None
        self._remember(name, relaxed)
        if relaxed is None or not relaxed.changes:
            return tool
        return {**tool, "outputSchema": dict(relaxed.schema)}

    def _remember(self, name: str, relaxed: Relaxed | None) -> None:
        if len(self._schemas) >= _SCHEMAS_KEPT and name not in self._schemas:
            del self._schemas[next(iter(self._schemas))]
        self._schemas[name] = relaxed


def _relaxed(schema: Mapping[str, Any]) -> Relaxed | None:
    from ..wire._schemas import relaxed_output_schema

    return relaxed_output_schema(schema)
