"""`visiongate probe` end to end, against loopback servers that speak each API shape.

Each server "sees" the images of the tool result it is sent by running the project's local
OCR on them. Three behaviours per shape: one reads the images in tool results, one silently
drops them, one answers 400 with the kind of error such routes give.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from _cli_helpers import validate_output
from _routing_helpers import loopback_server, without_proxies

from visiongate.adapters.probe import PROBE_APIS
from visiongate.adapters.vision import LocalOCRBackend
from visiongate.cli import main
from visiongate.engine import Gate

KEY = "sk-probe-test-0123456789abcdef"
KEY_ENV = "VISIONGATE_PROBE_TEST_KEY"
KEY_HEADERS = {
    "anthropic": ("x-api-key", KEY),
    "openai-responses": ("authorization", f"Bearer {KEY}"),
    "openai-chat": ("authorization", f"Bearer {KEY}"),
    "gemini": ("x-goog-api-key", KEY),
}
ROUTES = {
    "anthropic": ("anthropic", "claude-sonnet-4-5", ""),
    "openai-responses": ("openai", "gpt-4o", "/v1"),
    "openai-chat": ("openrouter", "anthropic/claude-sonnet-4.5", "/v1"),
    "gemini": ("gemini", "gemini-3-pro-preview", "/v1beta"),
}
REJECTIONS = {
    "anthropic": {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.2.content.0.tool_result.content.1.image: image content is not "
            "supported for this model",
        },
    },
    "openai-responses": {
        "error": {
            "type": "invalid_request_error",
            "message": "Invalid value: 'input_image'. function_call_output supports only text",
        }
    },
    "openai-chat": {
        "error": {
            "type": "invalid_request_error",
            "message": "Invalid content type. image_url is only supported by certain models.",
        }
    },
    "gemini": {
        "error": {
            "code": 400,
            "message": "Multimodal function responses are not supported for this model.",
            "status": "INVALID_ARGUMENT",
        }
    },
}


# -- what each shape carries, and how each shape answers ---------------------------------------


def _api_of(path: str) -> str:
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith(":generateContent"):
        return "gemini"
    raise AssertionError(path)


def _data_url(url: str) -> bytes:
    assert url.startswith("data:image/"), url[:40]
    return base64.b64decode(url.partition(",")[2])


def tool_result_images(api: str, body: dict[str, Any]) -> list[bytes]:
    """The images the request carries as (part of) a tool result, in this API's shape."""
    if api == "anthropic":
        return [
            base64.b64decode(part["source"]["data"])
            for message in body["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
            for part in block["content"]
            if part.get("type") == "image"
        ]
    if api == "openai-responses":
        return [
            _data_url(part["image_url"])
            for item in body["input"]
            if item.get("type") == "function_call_output" and isinstance(item["output"], list)
            for part in item["output"]
            if part.get("type") == "input_image"
        ]
    if api == "openai-chat":
        # Chat tool messages take text only; the images travel in the user message that
        # follows the tool message, and that is part of the tool result here.
        found, after_tool = [], False
        for message in body["messages"]:
            parts = message["content"] if isinstance(message["content"], list) else []
            if message["role"] == "tool" or (message["role"] == "user" and after_tool):
                found += [_data_url(p["image_url"]["url"]) for p in parts if "image_url" in p]
            after_tool = message["role"] == "tool"
        return found
    return [
        base64.b64decode(part["inlineData"]["data"])
        for content in body["contents"]
        for outer in content["parts"]
        if "functionResponse" in outer
        for part in outer["functionResponse"].get("parts", [])
    ]


def reply_body(api: str, text: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if api == "openai-responses":
        content = [{"type": "output_text", "text": text}]
        return {"output": [{"type": "message", "role": "assistant", "content": content}]}
    if api == "openai-chat":
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}


@dataclass
class ProbeServer:
    """One loopback server; the first path segment picks the behaviour."""

    ocr: LocalOCRBackend
    port: int = 0
    requests: list[tuple[str, str, dict[str, str], int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def base_url(self, behaviour: str, api: str) -> str:
        return f"http://127.0.0.1:{self.port}/{behaviour}{ROUTES[api][2]}"

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any]:
        behaviour, api = path.split("/")[1], _api_of(path)
        images = tool_result_images(api, body)
        with self.lock:
            self.requests.append((behaviour, api, headers, len(images)))
        if behaviour == "reject" and images:
            return 400, REJECTIONS[api]
        if behaviour == "accept" and images:
            seen = [self.ocr.describe(image, "image/png").text for image in images]
            return 200, reply_body(api, "The image in the tool result reads: " + " ".join(seen))
        return 200, reply_body(api, "NO IMAGE: the tool result holds only text.")


def _handler(server: ProbeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            headers = {key.lower(): value for key, value in self.headers.items()}
            status, answer = server.answer(self.path, headers, body)
            data = json.dumps(answer).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: requests are recorded on the server."""

    return Handler


@contextmanager
def probe_server() -> Iterator[ProbeServer]:
    running = ProbeServer(LocalOCRBackend())
    with loopback_server(_handler(running)) as port:
        running.port = port
        yield running


@pytest.fixture(scope="module")
def server() -> Iterator[ProbeServer]:
    with without_proxies(), probe_server() as running:
        yield running


# -- the probe, for every shape and behaviour ---------------------------------------------------

EXPECTED = {"accept": ("accepts", 0), "drop": ("inconclusive", 1), "reject": ("refuses", 0)}
CASES = [(api, behaviour) for api in PROBE_APIS for behaviour in EXPECTED]


@pytest.mark.parametrize(("api", "behaviour"), CASES, ids=[f"{a}-{b}" for a, b in CASES])
def test_probe_settles_each_behaviour_of_each_shape(
    api: str,
    behaviour: str,
    server: ProbeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    provider, model, _suffix = ROUTES[api]
    routes = tmp_path / "routes.json"
    argv = [
        "probe", "--provider", provider, "--model", model, "--api", api,
        "--base-url", server.base_url(behaviour, api), "--key-env", KEY_ENV,
        "--routes", str(routes), "--save", "--json",
    ]  # fmt: skip
    code = main(argv)
    out, err = capsys.readouterr()
    verdict, exit_code = EXPECTED[behaviour]
    result = json.loads(out)
    validate_output("probe", result)
    assert (result["verdict"], code) == (verdict, exit_code), result
    assert KEY not in out + err
    assert not routes.exists() or KEY not in routes.read_text()
    _behaviour, seen_api, headers, images = server.requests[-1]
    assert (seen_api, images) == (api, 1)
    name, value = KEY_HEADERS[api]
    assert headers[name] == value
    decision = Gate.load(routes=routes).decide(provider, model)
    if verdict == "inconclusive":
        assert result["saved"].startswith("not saved") and not routes.exists()
        return
    assert decision.facts["path"] == verdict
    assert decision.provenance["path"].startswith("routes.json: probed ")
    if verdict == "refuses":
        assert "HTTP 400" in result["detail"]


def test_the_probe_reads_the_code_it_sent(server: ProbeServer) -> None:
    from visiongate.adapters.probe import ProbeTarget, probe_route

    route = Gate.load(routes=False).resolver.resolve("anthropic", "claude-sonnet-4-5").route
    target = ProbeTarget(
        route, "claude-sonnet-4-5", "anthropic", server.base_url("accept", "anthropic")
    )
    first, second = probe_route(target), probe_route(target)
    assert first.verdict == second.verdict == "accepts"
    assert first.code != second.code  # a fresh random code each time
    assert first.code in "".join(first.reply.split())


def test_a_named_key_variable_that_is_not_set_is_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    code = main(["probe", "--provider", "anthropic", "--model", "m", "--key-env", KEY_ENV])
    assert code == 2
    assert f"environment variable `{KEY_ENV}` is not set" in capsys.readouterr().err


def test_a_shape_the_probe_does_not_speak_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", "--provider", "bedrock", "--model", "anthropic.claude-sonnet-5"])
    assert code == 2
    assert "the probe does not speak api `bedrock`" in capsys.readouterr().err


def test_an_unknown_endpoint_needs_a_base_url(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", "--provider", "nous", "--model", "m"])
    assert code == 2
    assert "no known endpoint for `nous` over `openai-chat`: give `--base-url`" in (
        capsys.readouterr().err
    )


def test_a_server_that_is_not_there_is_inconclusive_and_names_no_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    code = main([
        "probe", "--provider", "openai", "--model", "gpt-4o",
        "--base-url", "http://user:secret@127.0.0.1:9/v1", "--key-env", KEY_ENV,
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1 and "verdict: inconclusive: no answer from http://127.0.0.1:9" in out
    assert "secret" not in out + err and KEY not in out + err
