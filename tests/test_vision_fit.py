"""The auxiliary backend sends what a vision model can read: images fitted to its own limits,
and once more, smaller, when the server rejects the size (a real server on loopback)."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from _image_samples import screenshot
from PIL import Image
from test_vision_http import KEY_ENV, MODEL, ChatServer, Reply, chat, completion

from visiongate.adapters.vision import (
    OpenAICompatibleBackend,
    VisionConfigError,
    VisionUnavailable,
    backend_from_config,
)

__all__ = ["chat"]  # the loopback server fixture, shared with test_vision_http

TOO_LARGE = Reply(413, {"error": {"message": "Request Entity Too Large"}})
ANSWER = Reply(body=completion("A dashboard with a sidebar."))


@pytest.fixture(scope="module")
def big_png() -> bytes:
    buffer = io.BytesIO()
    screenshot(4000, 2500, seed=3).save(buffer, "PNG")
    return buffer.getvalue()


def sent_images(server: ChatServer) -> list[Image.Image]:
    """The image of each request the server received, decoded."""
    images = []
    for request in server.requests:
        url = request.body["messages"][0]["content"][1]["image_url"]["url"]
        images.append(Image.open(io.BytesIO(base64.b64decode(url.partition(",")[2]))))
    return images


def backend(server: ChatServer, **options: Any) -> OpenAICompatibleBackend:
    return OpenAICompatibleBackend(
        "custom", MODEL, server.base_url, KEY_ENV, 5.0, 0, 0.01, **options
    )


def test_a_large_screenshot_is_fitted_to_the_backend_before_it_is_sent(
    chat: ChatServer, big_png: bytes
) -> None:
    chat.script = [ANSWER]
    backend(chat).describe(big_png, "image/png")
    (sent,) = sent_images(chat)
    assert max(sent.size) == 2048
    assert sent.size == (2048, 1280)


def test_the_backends_limits_come_from_the_config(chat: ChatServer, big_png: bytes) -> None:
    chat.script = [ANSWER]
    vision = {"base_url": chat.base_url, "model": MODEL, "api_key_env": KEY_ENV}
    vision |= {"max_edge_px": 800, "max_image_bytes": 65536}
    backend_from_config({"auxiliary": {"vision": vision}}).describe(big_png, "image/png")
    (sent,) = sent_images(chat)
    assert max(sent.size) <= 800
    url = chat.requests[0].body["messages"][0]["content"][1]["image_url"]["url"]
    assert len(url.partition(",")[2]) <= 65536


@pytest.mark.parametrize(
    "refusal",
    [
        TOO_LARGE,
        Reply(400, {"error": {"message": "image dimensions exceed the max allowed (2048)"}}),
    ],
    ids=["http-413", "http-400-about-size"],
)
def test_a_size_rejection_is_retried_once_smaller(
    chat: ChatServer, big_png: bytes, refusal: Reply
) -> None:
    chat.script = [refusal, ANSWER]
    description = backend(chat).describe(big_png, "image/png")
    assert description.text == "A dashboard with a sidebar."
    first, second = sent_images(chat)
    assert second.size == (first.size[0] // 2, first.size[1] // 2)


def test_a_second_size_rejection_is_reported_not_retried_again(
    chat: ChatServer, big_png: bytes
) -> None:
    chat.script = [TOO_LARGE, TOO_LARGE, ANSWER]
    with pytest.raises(VisionUnavailable, match=r"at 2048x1280 and again at 1024x640"):
        backend(chat).describe(big_png, "image/png")
    assert len(chat.requests) == 2


def test_a_refusal_that_is_not_about_size_is_not_retried(chat: ChatServer, big_png: bytes) -> None:
    chat.script = [Reply(400, {"error": {"message": "this model does not take images"}}), ANSWER]
    with pytest.raises(VisionUnavailable, match="refused the request"):
        backend(chat).describe(big_png, "image/png")
    assert len(chat.requests) == 1


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("max_edge_px", 100, "must be between 256 and 8000"),
        ("max_image_bytes", "big", "must be a whole number"),
    ],
)
def test_bad_limits_in_the_config_are_refused(key: str, value: Any, message: str) -> None:
    vision = {"base_url": "http://127.0.0.1:9/v1", "model": MODEL, key: value}
    with pytest.raises(VisionConfigError, match=f"`auxiliary.vision.{key}` {message}"):
        backend_from_config({"auxiliary": {"vision": vision}})
