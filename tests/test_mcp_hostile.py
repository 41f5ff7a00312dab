"""The hostile test server's tools (`_hostile_mcp.py`) end to end, through the real stdio
client and router: no hidden text, no `MEDIA:` line of the server's, no key, and one bad
image sinks nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _hostile_http import HostileEndpoint, assert_no_key, hostile_endpoint
from _routing_helpers import make_router, without_proxies
from _warm import hostile_command as server_command
from test_sanitize_media import reads_a_media_line

from visiongate.adapters import call_and_route
from visiongate.adapters._routed import RoutedResult
from visiongate.adapters.mcp.example_server import ENGLAND_FLAG
from visiongate.adapters.payloads._render import API_NAMES

pytestmark = pytest.mark.anyio

NATIVE = {"provider": "anthropic", "model": "claude-sonnet-4-5"}
TEXT_ONLY = {"provider": "openrouter", "model": "deepseek/deepseek-v3.2"}
KEY_ENV = "VISIONGATE_TEST_ECHO_KEY"
KEY = "sk-or-v1-SECRET-9d8c7b6a5f4e3d2c"
TAG_RANGE = range(0xE0000, 0xE0080)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def mcp_call(tmp_path: Path, tool: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "visiongate", "mcp", "call", "--provider", "anthropic"]
    command += ["--model", "claude-sonnet-4-5", "--tool", tool, *extra, "--", *server_command()]
    environment = {**os.environ, "VISIONGATE_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=environment, check=False
    )


def hidden(text: str) -> list[str]:
    return [
        f"U+{ord(char):05X}" for char in text.replace(ENGLAND_FLAG, "") if ord(char) in TAG_RANGE
    ]


def model_texts(routed: RoutedResult, router: Any) -> list[str]:
    """What the model reads: the routed text and every payload shape, decoded."""
    texts = [routed.text]
    for api in API_NAMES:
        texts += list(_strings(router.payload(routed, api).as_json()))
    return texts


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_tags_in_every_field_reach_neither_payload_nor_record(tmp_path: Path) -> None:
    # Regression (issue 12): `(declared `image/png` + 112 invisible TAG characters)` and
    # `[audio (audio/wav…) omitted…]` reached the model.
    completed = mcp_call(tmp_path, "tagged")
    assert completed.returncode == 0, completed.stderr
    assert hidden(completed.stdout) == []
    document = json.loads(completed.stdout)
    counts = document["record"]["sanitizer"]
    assert counts["fields"]["tag_chars"] > 0
    assert {"text", "meta", "structured_content", "resource_link"} <= set(counts)
    text = json.dumps(document["payload"], ensure_ascii=False)
    assert "[audio (audio/wav): passed on as it came" in text
    assert "[resource link: r.png <file:///srv/r.png>, image/png: the chart]" in text


async def test_media_after_every_line_break_never_reads_as_the_router_s(tmp_path: Path) -> None:
    # Regression (issue 12): 7 lines reading exactly `MEDIA:/etc/passwd` survived in one result.
    router = make_router(tmp_path / "cache")
    sentinel = str(tmp_path / "secret.txt")
    routed = await call_and_route(
        router, server_command(), "separators", {"media_path": sentinel}, **NATIVE, timeout=60
    )
    own = {f"MEDIA:{path}" for path in routed.media_paths}
    assert len(own) == 1
    for text in model_texts(routed, router):
        for line in text.splitlines():
            if reads_a_media_line(line) is not None:
                assert line in own, repr(line)
    assert routed.record["execution"]["unverified_media_lines"] >= 75
    assert routed.text.count(f"[unverified] MEDIA:{sentinel}") >= 70


def test_one_bad_gif_does_not_sink_the_other_image(tmp_path: Path) -> None:
    # Regression (issue 13): `ValueError: Comment is too long` failed the whole call (exit 2).
    completed = mcp_call(tmp_path, "bad_gif")
    assert completed.returncode == 0, completed.stderr
    record = json.loads(completed.stdout)["record"]
    execution = record["execution"]
    assert execution["images_found"] == 2
    attached = {item["index"] for item in execution["attached"]}
    assert 2 in attached, execution
    # The GIF is attached re-encoded without its comment, or refused with a reason.
    assert attached == {1, 2} or execution["refused"][0]["index"] == 1
    assert execution["bytes_after"] < 100_000


@pytest.fixture(scope="module")
def echo() -> Iterator[HostileEndpoint]:
    with without_proxies() as patch:
        patch.setenv(KEY_ENV, KEY)
        with hostile_endpoint() as running:
            yield running


def echo_config(base_url: str) -> dict[str, Any]:
    vision = {"base_url": base_url, "model": "m", "api_key_env": KEY_ENV, "max_retries": 0}
    return {"auxiliary": {"vision": vision}}


@pytest.mark.parametrize("mode", ["echo-key", "echo-key-error"])
async def test_a_key_echoing_vision_endpoint_leaks_nothing(
    echo: HostileEndpoint, tmp_path: Path, mode: str
) -> None:
    # Regression (issue 12): the key reached the model text, the trace and the payload split,
    # base64-encoded or upper-cased.
    records: list[dict[str, Any]] = []
    router = make_router(
        tmp_path / "cache",
        echo_config(echo.base_url(mode)),
        policy="examples/describe-mcp",
        trace=records.append,
    )
    routed = await call_and_route(router, server_command(), "tile", {"number": 4}, **TEXT_ONLY)
    assert routed.lane == "text" and routed.images == ()
    assert echo.requests.get(mode, 0) >= 1
    everything = "\n".join(model_texts(routed, router)) + json.dumps(records, ensure_ascii=False)
    assert_no_key(everything, KEY)
    assert "(key)" in everything
    assert hidden(everything) == []
    for line in routed.text.splitlines():
        assert reads_a_media_line(line) is None or line == f"MEDIA:{routed.media_paths[0]}"
