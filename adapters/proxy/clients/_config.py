"""Client configuration snippets for `visiongate proxy --print-config CLIENT`, and the clients'
known limits for `--client NAME`.

A client's config swaps the server's own command for `visiongate proxy ... -- <the command>`;
the snippet is that entry in the client's own format: `mcpServers` JSON (Claude Desktop,
Claude Code's `.mcp.json`, Cursor, and most others), VS Code's `servers` JSON, Codex's TOML
and Goose's YAML. Every value is written as a JSON string, which TOML basic strings and YAML
double-quoted strings read the same way. Nothing here imports more than the standard library.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from ._names import server_name

__all__ = [
    "CLIENTS",
    "CLIENT_LIMITS",
    "DEFAULT_MAX_RESULT_BYTES",
    "server_name",
    "snippet",
]

DEFAULT_MAX_RESULT_BYTES: Final = 10_000_000
"""The official SDKs' stdio readers give up on a message of 10 MB, and the session with it."""
CLIENT_LIMITS: Final[Mapping[str, int]] = {
    # "Tool result is too large. Maximum size is 1MB." (the desktop app's own check)
    "claude-desktop": 1_000_000,
}
"""`--client NAME`: the largest message each client takes; others get the default."""


def _q(text: str) -> str:
    return json.dumps(text)


def _mcp_servers(name: str, command: str, args: Sequence[str]) -> str:
    entry = {"mcpServers": {name: {"command": command, "args": list(args)}}}
    return json.dumps(entry, indent=2)


def _vscode(name: str, command: str, args: Sequence[str]) -> str:
    entry = {"servers": {name: {"type": "stdio", "command": command, "args": list(args)}}}
    return json.dumps(entry, indent=2)


def _codex(name: str, command: str, args: Sequence[str]) -> str:
    listed = ", ".join(_q(arg) for arg in args)
    return f"[mcp_servers.{name}]\ncommand = {_q(command)}\nargs = [{listed}]"


def _goose(name: str, command: str, args: Sequence[str]) -> str:
    listed = ", ".join(_q(arg) for arg in args)
    return "\n".join(
        [
            "extensions:",
            f"  {name}:",
            "    enabled: true",
            "    type: stdio",
            f"    name: {_q(name)}",
            f"    cmd: {_q(command)}",
            f"    args: [{listed}]",
            "    timeout: 300",
        ]
    )


CLIENTS: Final[Mapping[str, tuple[str, Callable[[str, str, Sequence[str]], str]]]] = {
    "claude-desktop": ("claude_desktop_config.json", _mcp_servers),
    "claude-code": (".mcp.json in the project, or `claude mcp add-json`", _mcp_servers),
    "cursor": ("~/.cursor/mcp.json or .cursor/mcp.json", _mcp_servers),
    "vscode": (".vscode/mcp.json", _vscode),
    "codex": ("~/.codex/config.toml", _codex),
    "goose": ("~/.config/goose/config.yaml", _goose),
    "json": ("any client that reads `mcpServers`", _mcp_servers),
}
"""Client -> (where its config lives, how an entry is written)."""


def snippet(client: str, name: str, command: str, args: Sequence[str]) -> str:
    """The config entry that starts `command args` as server `name` in `client`'s format."""
    _where, render = CLIENTS[client]
    return render(name, command, args)
