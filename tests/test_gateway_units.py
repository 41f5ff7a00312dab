"""The gateway's parts on their own (issue 30): each session's model from headers or query,
the front door's patterns and token, credentials as a digest, the command line's checks, the
listening socket, and how the client side puts a server's messages on the right stream."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol

from visiongate.adapters.gateway._client import HELD_MESSAGES, HttpDownstream, Slot
from visiongate.adapters.gateway._http import missing_hooks
from visiongate.adapters.gateway._options import GatewayOptions, SessionTarget, session_target
from visiongate.adapters.gateway._security import Checks, is_loopback, owner_digest
from visiongate.adapters.gateway._serve import bind
from visiongate.adapters.proxy._calls import ProxyTarget
from visiongate.adapters.proxy._downstream import ClientGone
from visiongate.adapters.proxy._serve import ProxyOptions
from visiongate.cli._common import UsageError
from visiongate.cli.proxy._gateway import listen_address

DEFAULT = ProxyTarget("anthropic", "claude-sonnet-4-5", 10_000_000)
PROVIDER, MODEL = "x-visiongate-provider", "x-visiongate-model"

# (headers, query) -> the target, or the start of the problem
TARGETS: list[tuple[dict[str, str], dict[str, str], SessionTarget | str]] = [
    ({}, {}, SessionTarget("anthropic", "claude-sonnet-4-5", "default")),
    ({PROVIDER: "openai", MODEL: "gpt-4o"}, {}, SessionTarget("openai", "gpt-4o", "header")),
    (
        {},
        {"provider": "ollama", "model": "qwen2.5vl:7b"},
        SessionTarget("ollama", "qwen2.5vl:7b", "query"),
    ),
    (  # headers win over the query
        {PROVIDER: "openai", MODEL: "gpt-4o"},
        {"provider": "ollama", "model": "llava"},
        SessionTarget("openai", "gpt-4o", "header"),
    ),
    ({PROVIDER: "openai"}, {}, "give both `X-Visiongate-Provider`"),
    ({}, {"model": "gpt-4o"}, "give both the query parameters"),
    ({PROVIDER: "openai", MODEL: "gpt 4o"}, {}, "`X-Visiongate-Provider` and"),
    ({PROVIDER: "openai", MODEL: "x" * 201}, {}, "`X-Visiongate-Provider` and"),
]


@pytest.mark.parametrize(("headers", "query", "expected"), TARGETS)
def test_a_sessions_model(
    headers: dict[str, str], query: dict[str, str], expected: SessionTarget | str
) -> None:
    found = session_target(headers, query, DEFAULT)
    if isinstance(expected, str):
        assert isinstance(found, str) and found.startswith("give both") == expected.startswith(
            "give both"
        )
        assert expected in found or expected.split("`")[1] in found
    else:
        assert found == expected


@pytest.mark.parametrize(
    ("patterns", "value", "allowed"),
    [
        (("http://localhost:*",), "http://localhost:5173", True),
        (("http://localhost:*",), "http://localhost:", False),
        (("http://localhost:*",), "http://localhost:5173.evil.example", False),
        (("http://localhost:*",), "http://localhost.evil.example:80", False),
        (("https://app.example",), "https://app.example", True),
        (("https://app.example",), "https://app.example.evil", False),
        ((), "http://anything", False),
    ],
)
def test_origin_patterns(patterns: tuple[str, ...], value: str, allowed: bool) -> None:
    checks = Checks.build("127.0.0.1", None, patterns, ())
    assert (checks.origin_problem(value) is None) is allowed
    assert checks.origin_problem(None) is None  # not a browser: no Origin to check


def test_host_checks_on_loopback_and_elsewhere() -> None:
    local = Checks.build("127.0.0.1", None, (), ("gw.example:*",))
    assert local.host_problem("127.0.0.1:8080") is None
    assert local.host_problem("localhost:8080") is None
    assert local.host_problem("gw.example:443") is None
    assert local.host_problem("evil.example:8080") is not None
    assert local.host_problem(None) is not None
    anywhere = Checks.build("0.0.0.0", "t" * 16, (), ())
    assert anywhere.host_problem("whatever.example") is None  # behind a proxy: any Host
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.0.0.1")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_the_bearer_token() -> None:
    checks = Checks.build("0.0.0.0", "a-token-of-16-chars", (), ())
    assert checks.authorized("Bearer a-token-of-16-chars")
    assert checks.authorized("bearer a-token-of-16-chars")
    assert not checks.authorized("Bearer a-token-of-16-charsX")
    assert not checks.authorized("Basic a-token-of-16-chars")
    assert not checks.authorized("a-token-of-16-chars")
    assert not checks.authorized(None)
    assert Checks.build("127.0.0.1", None, (), ()).authorized(None)
    options = GatewayOptions(ProxyOptions(DEFAULT), token="a-token-of-16-chars")
    assert "a-token" not in repr(options) and "a-token" not in str(options)


def test_credentials_are_kept_as_a_digest_of_the_named_headers() -> None:
    alice = {"authorization": "Bearer t", "x-user-key": "alice", "x-other": "1"}
    digest = owner_digest(alice, ("x-user-key",))
    assert digest == owner_digest({**alice, "x-other": "2"}, ("x-user-key",))
    assert digest != owner_digest({**alice, "x-user-key": "bob"}, ("x-user-key",))
    assert digest != owner_digest({**alice, "x-user-key": ""}, ("x-user-key",))
    assert digest != owner_digest(
        {k: v for k, v in alice.items() if k != "x-user-key"}, ("x-user-key",)
    )
    assert b"alice" not in digest and len(digest) == 32


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("8080", ("127.0.0.1", 8080)),
        (":0", ("127.0.0.1", 0)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:8080", ("::1", 8080)),
        ("localhost:x", None),
        ("::1:8080", None),
        ("127.0.0.1:70000", None),
    ],
)
def test_listen_addresses(given: str, expected: tuple[str, int] | None) -> None:
    if expected is None:
        with pytest.raises(UsageError):
            listen_address(given)
    else:
        assert listen_address(given) == expected


@pytest.mark.anyio
async def test_accepted_connections_send_small_writes_at_once() -> None:
    """Regression: the socket was bound as protocol 0, so asyncio did not set TCP_NODELAY on
    the connections it accepted, and each answer's small SSE writes waited out the client's
    delayed ACK: 44 ms a call instead of about 1."""
    sock = bind("127.0.0.1", 0)
    accepted: list[Any] = []

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(
            writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        )
        writer.close()

    server = await asyncio.start_server(connected, sock=sock)
    async with server:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        for _ in range(100):
            if accepted:
                break
            await asyncio.sleep(0.01)
        writer.close()
    assert accepted and accepted[0] != 0


def test_a_port_in_use_is_a_clear_error() -> None:
    taken = bind("127.0.0.1", 0)
    with pytest.raises(OSError, match=r"cannot listen on 127\.0\.0\.1:\d+: "):
        bind("127.0.0.1", taken.getsockname()[1])
    taken.close()


# -- the client side: where a server's message goes ------------------------------------------


def _call(request_id: int, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "t"}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _posted(downstream: HttpDownstream, message: dict[str, Any]) -> Slot:
    return downstream.request(json.dumps(message).encode(), message)


def _drained(queue: Slot) -> list[tuple[str, bool]]:
    """What a POST (or the GET stream) got so far: each message's method or answer id."""
    out = []
    while not queue.empty():
        item = queue.get_nowait()
        if item is None:
            out.append(("end", True))
            continue
        message = json.loads(item[0])
        out.append((message.get("method") or f"answer {message.get('id')}", item[1]))
    return out


async def _read_all(downstream: HttpDownstream, count: int) -> list[bytes]:
    lines = downstream.lines()
    return [await lines.__anext__() for _ in range(count)]  # type: ignore[misc]


@pytest.mark.anyio
async def test_server_messages_go_to_the_request_they_belong_to() -> None:
    downstream = HttpDownstream()
    one, two = _posted(downstream, _call(1, token="p-1")), _posted(downstream, _call(2, token=7))
    assert len(await _read_all(downstream, 2)) == 2
    progress = (
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":"p-1","progress":1}}'
    )
    await downstream.send(progress)
    await downstream.send(progress.replace(b'"p-1"', b"7"))
    await downstream.send(
        b'{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}'
    )
    await downstream.send(b'{"jsonrpc":"2.0","id":2,"result":{"content":[]}}')
    await downstream.send(b'{"jsonrpc":"2.0","id":"s2","method":"elicitation/create","params":{}}')
    assert _drained(one) == [
        ("notifications/progress", False),
        ("elicitation/create", False),  # call 2 was answered: call 1 is the one open
    ]
    assert _drained(two) == [
        ("notifications/progress", False),
        ("sampling/createMessage", False),  # the newest call still open
        ("answer 2", True),
    ]


@pytest.mark.anyio
async def test_get_stream_messages_wait_until_the_client_opens_one() -> None:
    downstream = HttpDownstream()
    log = (
        b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%d"}}'
    )
    for number in range(3):
        await downstream.send(log % number)
    await downstream.send(b'{"jsonrpc":"2.0","id":"r1","method":"roots/list"}')
    stream = downstream.listening()
    assert stream is not None and downstream.listening() is None  # one GET stream a session
    assert [m for m, _ in _drained(stream)] == ["notifications/message"] * 3 + ["roots/list"]
    await downstream.send(log % 9)
    assert _drained(stream) == [("notifications/message", False)]
    downstream.not_listening()
    for number in range(HELD_MESSAGES + 5):
        await downstream.send(log % number)
    assert downstream.dropped == 5
    stream = downstream.listening()  # the oldest were dropped: the newest come out, in order
    assert stream is not None
    kept = []
    while not stream.empty():
        item = stream.get_nowait()
        assert item is not None
        kept.append(json.loads(item[0])["params"]["data"])
    assert kept == [str(n) for n in range(5, HELD_MESSAGES + 5)]


@pytest.mark.anyio
async def test_a_cancelled_request_ends_its_post_and_is_no_longer_open() -> None:
    downstream = HttpDownstream()
    slot = _posted(downstream, _call(5))
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 5, "reason": "user"},
    }
    downstream.other(json.dumps(note).encode(), note)
    lines = downstream.lines()
    await lines.__anext__()  # type: ignore[attr-defined]  # the call
    await lines.__anext__()  # type: ignore[attr-defined]  # its cancellation
    assert slot.empty()  # the relay has not resumed past the cancellation yet
    downstream.end()
    with pytest.raises(ClientGone):  # resumed: the cancelled call's POST is ended first
        await lines.__anext__()  # type: ignore[attr-defined]
    (answer, final) = slot.get_nowait()  # type: ignore[misc]
    assert final and json.loads(answer)["error"] == {"code": -32800, "message": "Request cancelled"}
    assert slot.empty()  # ended once: the session's end owed it nothing more


@pytest.mark.anyio
async def test_an_answer_the_sdk_refuses_becomes_an_error_for_its_request() -> None:
    downstream = HttpDownstream()
    slot = _posted(downstream, _call(3))
    await _read_all(downstream, 1)
    await downstream.send(b'{"jsonrpc":"2.0","id":3,"result":"not an object"}')
    answer, final = slot.get_nowait()  # type: ignore[misc]
    error = json.loads(answer)["error"]
    assert final and json.loads(answer)["id"] == 3 and "malformed" in error["message"]
    downstream.end()
    with pytest.raises(ClientGone):
        await downstream.send(b'{"jsonrpc":"2.0","id":4,"result":{}}')


@pytest.mark.anyio
async def test_a_request_still_open_when_the_session_ends_gets_an_error() -> None:
    downstream = HttpDownstream()
    slot = _posted(downstream, _call(8))
    downstream.end()
    answer, final = slot.get_nowait()  # type: ignore[misc]
    assert final and "session ended" in json.loads(answer)["error"]["message"]
    assert _drained(_posted(downstream, _call(9))) == [("end", True)]


class _NoLongerCalled(H11Protocol):
    """A uvicorn that stopped calling `on_response_complete` after a response (as a rename
    of the hook would): the deadline would silently stop re-arming."""

    def handle_events(self) -> None:
        return None


def test_this_uvicorn_has_every_hook_the_head_deadline_uses() -> None:
    """Issue 38: `_http` subclasses uvicorn's h11 protocol; `.ci/run` runs this on uvicorn's
    newest release too, so a renamed hook fails here rather than silently in production."""
    assert missing_hooks() == []


def test_a_hook_renamed_or_gone_is_named() -> None:
    assert missing_hooks(_NoLongerCalled) == ["on_response_complete called by handle_events"]
    missing = missing_hooks(asyncio.Protocol)
    assert "on_response_complete" in missing and missing[-1].startswith("the constructor")


def test_read_timeout_is_refused_loudly_on_a_uvicorn_without_the_hooks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from visiongate.adapters.gateway import _http
    from visiongate.cli.proxy import _gateway

    monkeypatch.setattr(_http, "missing_hooks", lambda: missing_hooks(_NoLongerCalled))
    with pytest.raises(UsageError, match="`--read-timeout` cannot be kept on uvicorn"):
        _gateway._check_head_deadline()
