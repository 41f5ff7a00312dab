"""Cleaning untrusted tool output: invisible characters in six channels, reserved `_meta` keys.

`Sanitizer` (`_sanitizer`) cleans text, JSON-like values and `_meta` mappings and tallies what
it removed and kept; `_invisible` is the model of invisible characters and their legitimate
uses (its Unicode data in the generated `_invisible_data`), `_text` compiles a policy's modes
and cleans one text (`_runs` by runs where none can be legitimate, `_walk` where legitimate
uses may stand), `_keys` holds the reserved-key
test, `_mcp` walks the
MCP tool result and `_listings` the tool, resource and prompt listings and protocol errors in
the wire shape (whatever SDK made them), technical fields included. `_media` marks
`MEDIA:` lines that are not the router's under every Unicode line-breaking rule (tables in
`_media_tables`), and `_line` makes a server's words one clean line for error messages.

`Sanitizer` is imported on first use: the proxy imports `_line` and `_media` to name its server
and mark `MEDIA:` lines before its first answer, and must not pay for compiling the character
rules (`_text`) that only text that is not ASCII needs (issue 37).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names

if TYPE_CHECKING:
    from ._sanitizer import Sanitizer

__all__ = ["Sanitizer"]

__getattr__, __dir__ = lazy_names(__name__, {"Sanitizer": "._sanitizer"}, __all__)
