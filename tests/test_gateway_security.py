"""The gateway's front door, as the MCP specification asks of a Streamable HTTP server (issue
30): a missing or wrong token, a foreign Origin or Host, a non-loopback address without a
token, a session id presented with another client's credentials, another session's `MEDIA:`
path: all refused, with a status and a JSON-RPC error that say why; only the named headers
reach a `--url` server, and the token is never written anywhere."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _gateway_helpers import (
    ACCEPT,
    TEXT_MODEL,
    GatewayProcess,
    connected,
    gateway_argv,
    module_gateway,
    raw_initialize,
    running,
    sse_messages,
    wait_until,
)
from _proxy_helpers import SeenHeaders, example_over_http, proxy_env, read_trace
from _warm import server_command
from mcp.types import TextContent

pytestmark = pytest.mark.anyio
CORNER = {"left": 0, "top": 0, "width": 320, "height": 120}
"""A region of the example server's screenshot that holds a few words."""
TOKEN = "s3cret-token-for-the-gateway-tests"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


guarded = module_gateway(
    "gateway-security",
    ["--listen", "127.0.0.1:0", "--token-env", "VG_TEST_TOKEN", "--allow-origin",
     "http://localhost:*", "--max-request-bytes", "100000"],
    server_command(),
    env={"VG_TEST_TOKEN": TOKEN},
)  # fmt: skip
BEARER = {"authorization": f"Bearer {TOKEN}"}


def test_a_missing_or_wrong_token_is_refused(guarded: GatewayProcess) -> None:
    with httpx2.Client(timeout=60) as client:
        for presented in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}):
            refused, session_id = raw_initialize(client, guarded.url, presented)
            assert refused.status_code == 401 and session_id is None
            assert refused.headers["www-authenticate"] == 'Bearer realm="visiongate"'
            assert "a valid bearer token is required" in refused.json()["error"]["message"]
        assert client.get(f"{guarded.base}/metrics").status_code == 401
        assert client.get(f"{guarded.base}/healthz").status_code == 200  # probes need none
        opened, session_id = raw_initialize(client, guarded.url, BEARER)
        assert opened.status_code == 200 and session_id
        metrics = client.get(f"{guarded.base}/metrics", headers=BEARER)
        assert 'visiongate_http_refused_total{reason="unauthorized"} 4.0' in metrics.text
        client.delete(guarded.url, headers={**BEARER, "mcp-session-id": session_id})


def test_a_foreign_origin_or_host_is_refused(guarded: GatewayProcess) -> None:
    with httpx2.Client(timeout=60) as client:
        evil = {**BEARER, "origin": "http://evil.example"}
        refused, _ = raw_initialize(client, guarded.url, evil)
        assert refused.status_code == 403
        assert "the Origin `http://evil.example` is not allowed" in refused.text
        rebound, _ = raw_initialize(client, guarded.url, {**BEARER, "host": "evil.example"})
        assert rebound.status_code == 421
        allowed, session_id = raw_initialize(
            client, guarded.url, {**BEARER, "origin": "http://localhost:5173"}
        )
        assert allowed.status_code == 200 and session_id
        client.delete(guarded.url, headers={**BEARER, "mcp-session-id": session_id})


def test_a_body_over_the_limit_is_refused(guarded: GatewayProcess) -> None:
    with httpx2.Client(timeout=60) as client:
        _, session_id = raw_initialize(client, guarded.url, BEARER)
        assert session_id
        call = {
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "tile", "arguments": {"number": 1, "pad": "x" * 200_000}},
        }  # fmt: skip
        headers = {**ACCEPT, **BEARER, "mcp-session-id": session_id}
        refused = client.post(guarded.url, json=call, headers=headers)
        assert refused.status_code == 413
        assert refused.headers["connection"] == "close"
        assert "over the gateway's limit of 100000 bytes" in refused.json()["error"]["message"]
        client.delete(guarded.url, headers={**BEARER, "mcp-session-id": session_id})


@pytest.mark.parametrize(
    ("body", "code", "said"),
    [
        (b"{nope", -32700, "the body is not JSON (JSON is malformed"),
        (b'{"jsonrpc":"2.0","method":"\xff"}', -32700, "the body is not JSON (Invalid UTF-8"),
        (b"[" * 40_000 + b"]" * 40_000, -32700, "the body is nested more than 100 levels"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]', -32600, "a JSON-RPC batch"),
        (b"42", -32600, "not a JSON-RPC message (not an object)"),
        (b'{"id":1,"method":"initialize"}', -32600, 'no "jsonrpc": "2.0"'),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', -32600, "`id` must be"),
        (b'{"jsonrpc":"2.0","id":true,"method":"initialize"}', -32600, "`id` must be"),
        (b'{"jsonrpc":"2.0","id":[1],"method":"initialize"}', -32600, "`id` must be"),
    ],
    ids=[
        "not JSON",
        "invalid UTF-8",
        "nested 40,000 deep",
        "a batch",
        "a number",
        "no jsonrpc",
        "an object id",
        "a true id",
        "an array id",
    ],
)
def test_a_body_that_is_no_message_is_told_so_before_any_session_question(
    guarded: GatewayProcess, body: bytes, code: int, said: str
) -> None:
    with httpx2.Client(timeout=60) as client:
        refused = client.post(guarded.url, content=body, headers={**ACCEPT, **BEARER})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == code and said in error["message"], error
    assert "Mcp-Session-Id" not in error["message"]


def test_a_body_that_is_no_message_in_a_session_is_told_so_and_the_session_goes_on(
    guarded: GatewayProcess,
) -> None:
    with httpx2.Client(timeout=60) as client:
        _, session_id = raw_initialize(client, guarded.url, BEARER)
        assert session_id
        headers = {**ACCEPT, **BEARER, "mcp-session-id": session_id}
        batch = b'[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]'
        odd_id = b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}'
        for body, code in ((b"{nope", -32700), (batch, -32600), (b"42", -32600), (odd_id, -32600)):
            refused = client.post(guarded.url, content=body, headers=headers)
            assert refused.status_code == 400
            error = refused.json()["error"]
            assert error["code"] == code and "Validation error" not in error["message"], error
        ping = client.post(guarded.url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"},
                           headers=headers)  # fmt: skip
        assert ping.status_code == 200 and sse_messages(ping.text)[0]["result"] == {}
        client.delete(guarded.url, headers={**BEARER, "mcp-session-id": session_id})


async def test_another_sessions_media_path_is_refused(guarded: GatewayProcess) -> None:
    async with (
        connected(guarded.url, {**BEARER, **TEXT_MODEL}) as alice,
        connected(guarded.url, {**BEARER, **TEXT_MODEL}) as bob,
    ):
        shot = await alice.call_tool("screenshot", {})
        first = shot.content[0]
        assert isinstance(first, TextContent)
        path = next(line for line in first.text.splitlines() if "MEDIA:" in line)
        path = path[path.index("MEDIA:") :].split()[0]
        stolen = await bob.call_tool("visiongate_view_image", {"path": path})
        assert stolen.is_error
        assert "is not an image this proxy showed you in this session" in _text(stolen)
        # A corner of it (see tests/test_gateway_shared.py): whose path it is is what counts.
        own = await alice.call_tool("visiongate_view_image", {"path": path, "region": CORNER})
        assert not own.is_error
        bob_shot = await bob.call_tool("screenshot", {})
    # The same picture, kept in each session's own directory.
    trace = guarded.home / "trace.jsonl"
    records = [r for r in read_trace(trace) if r["execution"].get("media_paths")]
    directories = {Path(r["execution"]["media_paths"][0]).parent for r in records}
    assert len(directories) == 2 and bob_shot.content
    assert all(d.parent.name == "sessions" for d in directories)
    # removed when the sessions ended
    assert wait_until(lambda: not any(d.exists() for d in directories))


async def test_the_token_is_never_logged_nor_recorded(guarded: GatewayProcess) -> None:
    # This test makes its own refusal and its own recorded call, whatever ran before it.
    with httpx2.Client(timeout=60) as client:
        refused, _ = raw_initialize(client, guarded.url, {"authorization": "Bearer wrong"})
        assert refused.status_code == 401
    async with connected(guarded.url, {**BEARER, **TEXT_MODEL}) as session:
        assert (await session.call_tool("screenshot", {})).content
    assert wait_until(lambda: (guarded.home / "trace.jsonl").exists())
    assert TOKEN not in guarded.text()
    assert TOKEN not in (guarded.home / "trace.jsonl").read_text()
    assert "without a valid bearer token" in guarded.text()


def test_a_non_loopback_address_without_a_token_is_refused(tmp_path: Path) -> None:
    argv = gateway_argv(["--listen", "0.0.0.0:0"], server_command())
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=proxy_env(tmp_path))
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0, which is not loopback, without authentication" in (
        done.stderr
    )
    short = subprocess.run(
        gateway_argv(["--listen", "0.0.0.0:0", "--token-env", "VG_SHORT"], server_command()),
        capture_output=True,
        text=True,
        timeout=60,
        env={**proxy_env(tmp_path), "VG_SHORT": "short"},
    )
    assert short.returncode == 2 and "at least 16 visible ASCII characters" in short.stderr


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


# -- a `--url` server, with the client's own credentials forwarded ----------------------------


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, SeenHeaders]]:
    with example_over_http() as served:
        yield served


def test_a_session_id_with_another_clients_credentials_is_refused(
    upstream: tuple[str, SeenHeaders], tmp_path: Path
) -> None:
    url, seen = upstream
    options = ["--listen", "127.0.0.1:0", "--url", url, "--forward-header", "X-User-Key"]
    with running(gateway_argv(options), tmp_path) as gateway, httpx2.Client(timeout=60) as client:
        alice = {"x-user-key": "alice-key", "x-other": "not-forwarded"}
        _, session_id = raw_initialize(client, gateway.url, alice)
        assert session_id
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        as_bob = {**ACCEPT, "x-user-key": "bob-key", "mcp-session-id": session_id}
        stolen = client.post(gateway.url, json=listing, headers=as_bob)
        assert stolen.status_code == 404  # to another client the session does not exist
        without = client.post(gateway.url, json=listing, headers={**as_bob, "x-user-key": ""})
        assert without.status_code == 404
        own = client.post(gateway.url, json=listing, headers={**as_bob, **alice})
        assert own.status_code == 200 and "tools" in sse_messages(own.text)[-1]["result"]
        assert client.delete(gateway.url, headers={**alice, "mcp-session-id": session_id})
    forwarded = [h for h in seen.seen if "x-user-key" in h]
    assert forwarded and all(h["x-user-key"] == "alice-key" for h in forwarded)
    assert not any("x-other" in h or "authorization" in h for h in seen.seen)


def test_a_slow_request_head_or_body_is_cut_off_and_others_go_on(tmp_path: Path) -> None:
    """Slowloris: connections that never finish their request's head would each hold a file
    descriptor, before any token is checked, until the gateway could accept no one."""
    argv = gateway_argv(
        ["--listen", "127.0.0.1:0", "--read-timeout", "1", "--token-env", "VG_TEST_TOKEN"],
        server_command(),
    )
    with running(argv, tmp_path, env={"VG_TEST_TOKEN": TOKEN}) as gateway:
        port = int(gateway.base.rsplit(":", 1)[1])
        heads = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(50)]
        for head in heads:
            head.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the rest
        with httpx2.Client(timeout=60) as client:
            assert client.get(f"{gateway.base}/healthz").status_code == 200  # meanwhile
            assert all(head.recv(1) == b"" for head in heads)  # closed, unanswered
            body = socket.create_connection(("127.0.0.1", port), timeout=10)
            body.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                + TOKEN.encode()
                + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            answer = _http_answer(body)
            assert answer.startswith("HTTP/1.1 408"), answer
            assert "did not arrive within 1 s (--read-timeout)" in answer
            assert "connection: close" in answer.lower()
            body.settimeout(5)
            assert body.recv(1) == b""  # closed: the rest of that body is no request's head
            opened, session_id = raw_initialize(client, gateway.url, BEARER)  # others go on
            assert opened.status_code == 200 and session_id
            metrics = client.get(f"{gateway.base}/metrics", headers=BEARER).text
        assert 'visiongate_http_refused_total{reason="slow_head"} 50.0' in metrics
        assert 'visiongate_http_refused_total{reason="slow_body"} 1.0' in metrics
        for connection in (*heads, body):
            connection.close()


def _http_answer(connection: socket.socket) -> str:
    """One HTTP/1.1 answer read whole from a raw socket: its head and `Content-Length` bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536) or b"\r\n\r\n"
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += connection.recv(65536)
    return (head + b"\r\n\r\n" + body).decode()
