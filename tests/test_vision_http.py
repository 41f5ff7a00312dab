"""The OpenAI-compatible backend against a real chat-completions server on loopback."""

from __future__ import annotations

import base64
import io
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PIL import Image

from visiongate.adapters.vision import (
    OpenAICompatibleBackend,
    VisionUnavailable,
    backend_from_config,
    describe_or_unavailable,
)

KEY_ENV = "VISIONGATE_TEST_VISION_KEY"
KEY = "test-key-4f1c"
MODEL = "test/vision-model"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: status, JSON (or raw text) body, headers and a delay."""

    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ChatServer:
    """A chat-completions server: answers from a script, the last reply repeating."""

    script: list[Reply] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    abandoned: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def next_reply(self, recorded: Recorded) -> Reply:
        with self.lock:
            self.requests.append(recorded)
            index = min(len(self.requests), len(self.script)) - 1
            return self.script[index]


def completion(text: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


def _handler(chat: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = chat.next_reply(Recorded(self.path, headers, body))
            # Waiting on an event, not sleeping, lets teardown end a slow reply at once.
            if reply.delay_s and chat.release.wait(reply.delay_s):
                return
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            raw = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            data = raw.encode("utf-8")
            try:
                self.send_response(reply.status)
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (the timeout test wants exactly that); count it.
                with chat.lock:
                    chat.abandoned += 1

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet; requests are recorded on the server instead."""

    return Handler


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    state = ChatServer()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 32), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


def backend(chat: ChatServer, **options: Any) -> OpenAICompatibleBackend:
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01}
    settings.update(options)
    return OpenAICompatibleBackend("custom", MODEL, chat.base_url, KEY_ENV, **settings)


def assert_no_pixels(text: str, image: bytes) -> None:
    encoded = base64.b64encode(image).decode("ascii")
    assert encoded[:40] not in text
    assert "base64," not in text


def test_success_sends_model_data_url_and_key(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(body=completion("A red rectangle with no text."))]
    with backend(chat) as vision:
        description = vision.describe(png, "image/png")
    assert description.text == "A red rectangle with no text."
    assert description.backend == f"openai-compatible:custom/{MODEL}"
    assert not description.cached
    [request] = chat.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == MODEL
    text_part, image_part = request.body["messages"][0]["content"]
    assert text_part["type"] == "text" and "Describe this image" in text_part["text"]
    expected_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    assert image_part == {"type": "image_url", "image_url": {"url": expected_url}}


def test_formats_servers_may_refuse_are_sent_as_png(chat: ChatServer) -> None:
    chat.script = [Reply(body=completion("a green square"))]
    buffer = io.BytesIO()
    Image.new("P", (16, 16), 3).save(buffer, "GIF")
    with backend(chat) as vision:
        vision.describe(buffer.getvalue(), "image/gif")
    url = chat.requests[0].body["messages"][0]["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    sent = Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2])))
    assert (sent.format, sent.size) == ("PNG", (16, 16))


def test_question_replaces_the_prompt(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(body=completion("It is red."))]
    with backend(chat) as vision:
        vision.describe(png, "image/png", question="What colour is the box?")
    prompt = chat.requests[0].body["messages"][0]["content"][0]["text"]
    assert prompt.startswith("What colour is the box?")


def test_429_then_success_honours_retry_after(chat: ChatServer, png: bytes) -> None:
    limited = Reply(429, {"error": {"message": "slow down"}}, (("Retry-After", "0"),))
    chat.script = [limited, Reply(body=completion("fine now"))]
    with backend(chat, backoff=10.0) as vision:
        description = vision.describe(png, "image/png")
    assert description.text == "fine now"
    assert len(chat.requests) == 2
    assert description.elapsed_ms < 5_000, "Retry-After: 0 should win over a 10 s backoff"


def test_timeout_is_bounded_and_says_what_to_fix(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(body=completion("too late"), delay_s=3.0)]
    vision = backend(chat, timeout=0.2, max_retries=1, deadline=5.0)
    with vision, pytest.raises(VisionUnavailable) as caught:
        vision.describe(png, "image/png")
    reason = caught.value.reason
    assert "did not answer within 0.2s (2 attempts)" in reason
    assert "raise `auxiliary.vision.timeout`" in reason
    assert len(chat.requests) == 2


def test_500_every_time_gives_up_and_leaks_no_pixels(chat: ChatServer, png: bytes) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    echo = {"error": {"message": f"internal error while handling {data_url}"}}
    chat.script = [Reply(500, echo)]
    with backend(chat, max_retries=2) as vision:
        note = describe_or_unavailable(vision, png, "image/png", media_path="/tmp/shot.png")
    assert len(chat.requests) == 3
    assert not note.ok and note.description is None
    assert note.reason is not None and "failed with http 500" in note.reason
    assert "(3 attempts)" in note.reason
    assert note.text.startswith("[vision unavailable: ")
    assert note.text.endswith("MEDIA:/tmp/shot.png]")
    assert_no_pixels(note.text, png)


def test_401_names_the_key_variable_and_is_not_retried(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(401, {"error": {"message": f"invalid key {KEY}"}})]
    with backend(chat) as vision, pytest.raises(VisionUnavailable) as caught:
        vision.describe(png, "image/png")
    assert f"check the key in `${KEY_ENV}`" in caught.value.reason
    assert KEY not in caught.value.reason
    assert len(chat.requests) == 1


def test_404_points_at_base_url_and_model(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(404, {"error": "model not found"})]
    with backend(chat) as vision, pytest.raises(VisionUnavailable) as caught:
        vision.describe(png, "image/png")
    assert "`auxiliary.vision.base_url`" in caught.value.reason
    assert f"model `{MODEL}`" in caught.value.reason


def test_missing_key_variable_fails_before_any_request(
    chat: ChatServer, png: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    vision = backend(chat)
    with vision, pytest.raises(VisionUnavailable, match=f"`{KEY_ENV}` is not set"):
        vision.describe(png, "image/png")
    assert chat.requests == []


def test_content_as_a_list_of_parts(chat: ChatServer, png: bytes) -> None:
    parts = [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    chat.script = [Reply(body=completion(parts))]
    with backend(chat) as vision:
        assert vision.describe(png, "image/png").text == "first\nsecond"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply(body="<html>not json</html>"), "did not answer in the chat-completions format"),
        (Reply(body={"error": {"message": "upstream down"}}), "reported: upstream down"),
        (Reply(body=completion("   ")), "returned an empty description"),
        (Reply(400, {"error": {"message": "no images"}}), "check that model"),
    ],
)
def test_bad_answers_become_reasons(
    chat: ChatServer, png: bytes, reply: Reply, expected: str
) -> None:
    chat.script = [reply]
    with backend(chat) as vision, pytest.raises(VisionUnavailable, match=expected):
        vision.describe(png, "image/png")
    assert len(chat.requests) == 1


def test_connection_refused_is_retried_then_explained(png: bytes) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://user:secret@127.0.0.1:{port}/v1?key=secret"
    vision = OpenAICompatibleBackend("custom", MODEL, base_url, None, 1.0, 1, 0.01)
    with vision, pytest.raises(VisionUnavailable) as caught:
        vision.describe(png, "image/png")
    assert "could not reach the vision endpoint" in caught.value.reason
    assert "(2 attempts)" in caught.value.reason
    assert "secret" not in caught.value.reason


def test_config_backend_caches_by_content(chat: ChatServer, png: bytes) -> None:
    chat.script = [Reply(body=completion("a red box"))]
    config = {
        "auxiliary": {
            "vision": {
                "provider": "custom",
                "model": MODEL,
                "base_url": chat.base_url,
                "api_key_env": KEY_ENV,
                "timeout": 5,
            }
        }
    }
    vision = backend_from_config(config)
    first = describe_or_unavailable(vision, png, "image/png", media_path="/tmp/a.png")
    second = describe_or_unavailable(vision, bytes(png), "image/png", media_path="/tmp/b.png")
    assert first.ok and second.ok
    assert second.description is not None and second.description.cached
    assert len(chat.requests) == 1
    assert "64x32 PNG image" in first.text
    assert f"the vision model `custom/{MODEL}`" in first.text
    assert first.text.endswith("[for a closer look, call vision_analyze with MEDIA:/tmp/a.png]")
