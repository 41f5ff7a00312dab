"""The HTTP vision backend against hostile endpoints on loopback: every call ends within its
deadline, reads at most its cap, and never lets the key or a raw error body reach the model.

The time bounds below are generous hang guards (each call must end within a few times its
deadline, where it used to run for minutes), not speed goals.
"""

from __future__ import annotations

import io
import time
import tracemalloc
from collections.abc import Iterator

import pytest
from _hostile_http import (
    HUGE,
    TAGS,
    HostileEndpoint,
    assert_no_key,
    gzip_bomb,
    hostile_endpoint,
    key_forms,
)
from _routing_helpers import without_proxies
from PIL import Image

from visiongate.adapters.vision import (
    OpenAICompatibleBackend,
    VisionUnavailable,
    describe_or_unavailable,
)
from visiongate.adapters.vision._redact import redact_key, summarize_error

KEY_ENV = "VISIONGATE_TEST_HOSTILE_KEY"
KEY = "sk-test-SECRET-4f1c9a7b2e81d0"


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileEndpoint]:
    with without_proxies() as patch:
        patch.setenv(KEY_ENV, KEY)
        with hostile_endpoint() as running:
            yield running


@pytest.fixture(scope="module")
def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (10, 120, 200)).save(buffer, "PNG")
    return buffer.getvalue()


def backend(hostile: HostileEndpoint, mode: str, **options: float) -> OpenAICompatibleBackend:
    settings = {"timeout": 1.0, "max_retries": 3, "backoff": 0.01, "deadline": 2.0}
    settings.update(options)
    return OpenAICompatibleBackend(
        "custom",
        "m",
        hostile.base_url(mode),
        KEY_ENV,
        settings["timeout"],
        int(settings["max_retries"]),
        settings["backoff"],
        deadline=settings["deadline"],
    )


def refused(vision: OpenAICompatibleBackend, png: bytes) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(VisionUnavailable) as caught:
        vision.describe(png, "image/png")
    return caught.value.reason, time.monotonic() - started


@pytest.mark.slow  # waits for a deadline
@pytest.mark.parametrize("mode", ["trickle-head", "trickle-body"])
def test_a_trickling_server_is_given_up_at_the_deadline(
    hostile: HostileEndpoint, png: bytes, mode: str
) -> None:
    # Regression (issue 13): with `timeout: 2` a trickling server ran past 100 s.
    reason, elapsed = refused(backend(hostile, mode), png)
    assert "did not finish within the 2s deadline (1 attempt)" in reason
    assert "`auxiliary.vision.deadline`" in reason
    assert elapsed < 10


@pytest.mark.slow  # waits for a deadline
def test_429_forever_ends_at_the_deadline_not_after_every_retry(
    hostile: HostileEndpoint, png: bytes
) -> None:
    # Regression (issue 13): "429 forever" took 90 s. Retry-After: 1 with a 2.5 s deadline
    # allows two waits; the third would pass it, so the call stops there.
    reason, elapsed = refused(backend(hostile, "rate-limited", max_retries=10, deadline=2.5), png)
    assert "rate limiting (http 429)" in reason
    assert "would pass the 2.5s deadline" in reason
    assert elapsed < 10


@pytest.mark.parametrize(("mode", "expected"), [
    ("huge-ok", "sent an answer over 65536 bytes and was cut off"),
    ("huge-error", "failed with http 500"),
])  # fmt: skip
def test_a_100_mb_body_is_read_only_up_to_the_cap(
    hostile: HostileEndpoint, png: bytes, mode: str, expected: str
) -> None:
    # Regression (issue 13): a 100 MB body peaked at 389 MB (error body: 1.1 GB, 10.7 s).
    vision = backend(hostile, mode, max_retries=0, deadline=20.0)
    vision.max_response_bytes = 65_536
    tracemalloc.start()
    try:
        reason, _ = refused(vision, png)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert expected in reason
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes"
    # The server could only push what the socket buffers took before the client hung up.
    assert hostile.sent.get(mode, 0) < HUGE // 4


def test_a_compressed_answer_is_refused_not_inflated(hostile: HostileEndpoint, png: bytes) -> None:
    gzip_bomb()  # built by the server thread of this process: not part of the measure
    tracemalloc.start()
    try:
        vision = backend(hostile, "gzip-bomb", timeout=20.0, max_retries=0, deadline=40.0)
        reason, _ = refused(vision, png)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "sent a compressed answer (`gzip`) though asked not to" in reason
    assert peak < 8 * 1024 * 1024


def test_an_echoed_key_never_reaches_the_description(hostile: HostileEndpoint, png: bytes) -> None:
    # Regression (issue 12): `k1=sk-test-SE CRET-…`, `k2=c2stdGVzdC1TRUNS…` reached the model.
    note = describe_or_unavailable(
        backend(hostile, "echo-key"), png, "image/png", media_path="/tmp/x.png"
    )
    assert note.ok and note.description is not None
    assert_no_key(note.text, KEY)
    assert note.text.count("(key)") >= 9
    assert "MEDIA(quoted):/etc/passwd" in note.text


def test_an_error_body_is_summarized_never_copied(hostile: HostileEndpoint, png: bytes) -> None:
    note = describe_or_unavailable(
        backend(hostile, "echo-key-error"), png, "image/png", media_path="/tmp/x.png"
    )
    assert not note.ok and note.reason is not None
    assert "rejected the api key (http 401: bad key k0=(key) k1=(key) k2=(key)" in note.reason
    assert_no_key(note.text, KEY)
    assert not any(0xE0000 <= ord(char) <= 0xE007F for char in note.text)
    assert len(note.reason) < 400 and "\n" not in note.text


def test_redaction_covers_each_transform_and_leaves_other_text() -> None:
    for name, form in key_forms(KEY).items():
        assert "(key)" in redact_key(form, KEY), name
        assert_no_key(redact_key(f"{name}={form}", KEY), KEY)
    assert redact_key("nothing secret here, sk-test", KEY) == "nothing secret here, sk-test"
    assert redact_key("short k", "k") == "short (key)"


def test_summaries_keep_status_and_a_short_visible_reason() -> None:
    body = ('{"error": {"message": "quota ' + "z" * 5000 + TAGS + '"}}').encode()
    summary = summarize_error(503, body, KEY)
    assert summary.startswith("http 503: quota ") and len(summary) < 140
    assert summarize_error(502, b"<html><body>" + b"x" * 900 + b"</body></html>", KEY) == "http 502"
    assert summarize_error(502, b"Bad Gateway", KEY) == "http 502: Bad Gateway"


@pytest.mark.parametrize("mode", ["deep-json", "deep-error"])
def test_a_deeply_nested_answer_is_unavailable_without_a_logged_traceback(
    hostile: HostileEndpoint, png: bytes, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression (issue 26): a body nested 100,000 deep raised RecursionError, which was
    handled as a backend's broken contract and logged with its traceback."""
    note = describe_or_unavailable(backend(hostile, mode), png, "image/png", media_path="/x.png")
    assert not note.ok and note.reason is not None
    assert not [record for record in caplog.records if record.exc_info], caplog.text
