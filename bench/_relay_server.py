"""A fast raw JSON-RPC MCP server for the proxy benchmark: `python bench/_relay_server.py`.

It answers in microseconds, so what a proxy in front of it adds is what gets measured, and it
exercises what a proxy must forward untouched (`bench_proxy.py --checks`):

| request                         | answer                                                       |
|---------------------------------|--------------------------------------------------------------|
| `initialize`                    | the client's protocol version, an `experimental` capability |
| `tools/list`                    | two pages: `echo`, then (cursor `page-2`) `ask`, `shot`     |
| `tools/call` `echo`             | one text block; a progress notification first if asked      |
| `tools/call` `shot`             | a 1920x1080 screenshot PNG (`_screens`)                      |
| `tools/call` `ask`              | asks the client `sampling/createMessage`, returns its answer |
| `tools/call` `cancelled`        | whether a `notifications/cancelled` for `params.id` arrived  |
| `vendor/echo` (any other method)| `{"method": ..., "params": ...}`: unknown methods answered   |
"""

from __future__ import annotations

import base64
import io
import json
import sys
from functools import lru_cache
from typing import Any

PROTOCOL = "2025-06-18"


@lru_cache(maxsize=1)
def screenshot() -> str:
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from _screens import screenshot as make  # type: ignore[import-not-found]

    buffer = io.BytesIO()
    make(1920, 1080).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


class Server:
    def __init__(self) -> None:
        self.cancelled: set[str] = set()
        self.waiting: dict[str, dict[str, Any]] = {}
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # the client's answer to our sampling request
            asked = self.waiting.pop(str(message.get("id")), None)
            if asked is not None:
                text = json.dumps(message.get("result") or message.get("error"))
                self.answer(asked, {"content": [{"type": "text", "text": text}]})
            return
        if method == "notifications/cancelled":
            self.cancelled.add(str(message.get("params", {}).get("requestId")))
            return
        if "id" not in message:
            return
        if method == "initialize":
            version = message.get("params", {}).get("protocolVersion", PROTOCOL)
            capabilities = {"tools": {"listChanged": True}, "experimental": {"bench": {}}}
            info = {"name": "relay-bench", "version": "1"}
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
            self.answer(message, result)
        elif method == "tools/list":
            self.answer(message, self.tools(message.get("params") or {}))
        elif method == "tools/call":
            self.call(message)
        else:
            self.answer(message, {"method": method, "params": message.get("params")})

    def tools(self, params: dict[str, Any]) -> dict[str, Any]:
        schema = {"type": "object"}
        if params.get("cursor") == "page-2":
            return {"tools": [{"name": n, "inputSchema": schema} for n in ("ask", "shot")]}
        return {"tools": [{"name": "echo", "inputSchema": schema}], "nextCursor": "page-2"}

    def call(self, request: dict[str, Any]) -> None:
        params = request.get("params") or {}
        name, arguments = params.get("name"), params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            progress = {"progressToken": token, "progress": 1, "total": 1, "message": "half"}
            self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        if name == "shot":
            image = {"type": "image", "data": screenshot(), "mimeType": "image/png"}
            self.answer(request, {"content": [{"type": "text", "text": "shot"}, image]})
        elif name == "ask":
            self.next_id += 1
            asked = f"s{self.next_id}"
            self.waiting[asked] = request
            sampling = {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
            }
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": asked,
                    "method": "sampling/createMessage",
                    "params": sampling,
                }
            )
        elif name == "cancelled":
            seen = str(arguments.get("id")) in self.cancelled
            self.answer(request, {"content": [{"type": "text", "text": json.dumps(seen)}]})
        else:
            text = f"echo {arguments.get('text', '')}"
            self.answer(request, {"content": [{"type": "text", "text": text}]})


def main() -> None:
    server = Server()
    for line in sys.stdin:
        if line.strip():
            server.handle(json.loads(line))


if __name__ == "__main__":
    main()
