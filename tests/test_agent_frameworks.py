"""visiongate inside real agent frameworks, offline: the `examples/` integrations, run as they are.

Each framework runs for real against the project's example MCP server over stdio: pydantic-ai
with its `FunctionModel`, openai-agents against a Responses API server on loopback written
here, and a plain loop on the official `mcp` SDK. A screenshot routed for a model that reads
images must reach the model as an image; routed for a text-only model, as text with its
`MEDIA:` path and no pixels.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _routing_helpers import PROXY_VARIABLES
from PIL import Image

# slow: agent frameworks driving real MCP servers, in process
pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VISION = ("anthropic", "claude-sonnet-4-5")
TEXT_ONLY = ("openrouter", "deepseek/deepseek-v3.2")
ROUTES = {"vision": VISION, "text": TEXT_ONLY}


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fitted_screenshot(data: bytes) -> Image.Image:
    """The example server's 2560x1440 screenshot, fitted by the router to 1568 px."""
    image = Image.open(io.BytesIO(data))
    assert image.size == (1568, 882)
    return image


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path / "cache"))


# -- pydantic-ai ------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["vision", "text"])
def test_pydantic_ai_model_gets_an_image_only_on_a_vision_route(route: str) -> None:
    from pydantic_ai import BinaryImage
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    module = example("pydantic_ai_agent")
    seen: list[Any] = []

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("screenshot", {})])
        seen.extend(part for message in messages[1:] for part in message.parts)
        return ModelResponse(parts=[TextPart("done")])

    assert asyncio.run(module.main(*ROUTES[route], respond)) == "done"
    contents = [
        item
        for part in seen
        if isinstance(part, ToolReturnPart) or hasattr(part, "content")
        for item in (part.content if isinstance(part.content, list) else [part.content])
    ]
    images = [item for item in contents if isinstance(item, BinaryImage)]
    text = "\n".join(item for item in contents if isinstance(item, str))
    assert "MEDIA:" in text
    if route == "vision":
        [image] = images
        # A format the route accepts (OpenAI's: JPEG, PNG, WebP), the one the note names.
        assert image.media_type in ("image/jpeg", "image/png", "image/webp")
        assert fitted_screenshot(image.data).format == image.media_type[6:].upper()
        assert f"[image 1 attached: 1568x882 {image.media_type[6:].upper()}" in text
    else:
        assert images == []
        assert "kept out of the conversation (text lane)" in text


# -- openai-agents ----------------------------------------------------------------------------


class ResponsesServer:
    """An OpenAI Responses API server on loopback: asks for a screenshot, then answers."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        if len(self.bodies) == 1:
            call = {"type": "function_call", "id": "fc_1", "call_id": "call_1"}
            output = [{**call, "name": "screenshot", "arguments": "{}", "status": "completed"}]
        else:
            text = {"type": "output_text", "text": "done", "annotations": []}
            output = [{"type": "message", "id": "msg_1", "role": "assistant", "content": [text]}]
            output[0]["status"] = "completed"
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        usage |= {"input_tokens_details": {"cached_tokens": 0}}
        usage |= {"output_tokens_details": {"reasoning_tokens": 0}}
        return {
            "id": f"resp_{len(self.bodies)}", "object": "response", "created_at": 0,
            "model": body["model"], "status": "completed", "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "output": output, "usage": usage,
        }  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps(owner.reply(body)).encode("utf-8")
                self.send_response(200 if self.path == "/v1/responses" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the bodies are recorded on the server."""

        return Handler


@pytest.fixture
def responses(monkeypatch: pytest.MonkeyPatch) -> Iterator[ResponsesServer]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    state = ResponsesServer()
    thread = threading.Thread(target=state.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    state.server.shutdown()
    state.server.server_close()
    thread.join(timeout=5)


@pytest.mark.parametrize("route", ["vision", "text"])
def test_openai_agents_request_body_carries_the_routed_result(
    route: str, responses: ResponsesServer
) -> None:
    module = example("openai_agents_agent")
    assert asyncio.run(module.main(responses.base_url, *ROUTES[route])) == "done"
    first, second = responses.bodies
    assert "screenshot" in [tool.get("name") for tool in first["tools"]]
    [output] = [item for item in second["input"] if item.get("type") == "function_call_output"]
    parts = output["output"]
    text = "\n".join(part["text"] for part in parts if part["type"] == "input_text")
    images = [part["image_url"] for part in parts if part["type"] == "input_image"]
    assert "MEDIA:" in text
    if route == "vision":
        [url] = images
        media_type = url.removeprefix("data:").partition(";")[0]
        assert media_type in ("image/jpeg", "image/png", "image/webp")
        assert url.startswith(f"data:{media_type};base64,")
        fitted = fitted_screenshot(base64.b64decode(url.partition(",")[2]))
        assert fitted.format == media_type[6:].upper()
        assert f"[image 1 attached: 1568x882 {media_type[6:].upper()}" in text
    else:
        assert images == []
        assert "kept out of the conversation (text lane)" in text


# -- the official mcp SDK ---------------------------------------------------------------------


@pytest.mark.parametrize("route", ["vision", "text"])
def test_mcp_sdk_loop_sends_the_routed_turn(route: str) -> None:
    module = example("mcp_agent_loop")
    requests: list[list[dict[str, Any]]] = []

    async def ask(messages: list[dict[str, Any]], tools: list[Any]) -> Any:
        requests.append(messages)
        assert "screenshot" in [tool.name for tool in tools]
        return await module.scripted_model(messages, tools)

    answer = asyncio.run(module.agent_loop(ask, *ROUTES[route]))
    [result] = requests[-1][-1]["content"]
    blocks = result["content"]
    images = [block for block in blocks if block["type"] == "image"]
    text = "\n".join(block["text"] for block in blocks if block["type"] == "text")
    assert (result["type"], result["tool_use_id"]) == ("tool_result", "call_1")
    assert "MEDIA:" in text
    if route == "vision":
        assert answer == "I got 1 image(s) from the tool"
        fitted_screenshot(base64.b64decode(images[0]["source"]["data"]))
    else:
        assert (answer, images) == ("I got 0 image(s) from the tool", [])


# -- as a user runs them ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mcp_agent_loop", "pydantic_ai_agent", "openai_agents_agent"])
def test_each_example_runs_from_the_command_line(
    name: str, responses: ResponsesServer, tmp_path: Path
) -> None:
    arguments = [responses.base_url] if name == "openai_agents_agent" else []
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    expected = "done" if name == "openai_agents_agent" else "I got 1 image(s) from the tool"
    assert run.stdout.strip().splitlines()[-1] == expected
