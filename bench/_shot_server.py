"""A raw JSON-RPC MCP server returning screenshots from files: `python _shot_server.py A.png ...`.

`tools/call` `shot` with `{"which": N}` answers the Nth file as one image block, read once
and kept, so what the proxy in front of it does is what gets measured.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

PROTOCOL = "2025-06-18"


def main() -> None:
    shots = [base64.b64encode(Path(name).read_bytes()).decode("ascii") for name in sys.argv[1:]]
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result = {
                "protocolVersion": PROTOCOL,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench-shots", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "shot", "inputSchema": {"type": "object"}}]}
        else:
            which = int((message.get("params") or {}).get("arguments", {}).get("which", 0))
            result = {"content": [{"type": "image", "data": shots[which], "mimeType": "image/png"}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
