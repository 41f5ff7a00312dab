"""`visiongate proxy` under hostile peers (issue 26).

Each case runs through one live proxy with another request in flight (a `slow` call of the
hostile server, `_hostile_proxy.py`): the hostile message from either side is answered under
its own id or not at all, the request in flight is answered exactly once, the session lives
on, nothing is printed as a traceback, and no process is left behind.

The watched policy path, signals and Ctrl-C have files of their own (`test_proxy_policy_path.py`,
`test_proxy_signals.py`, `test_proxy_ctrl_c.py`); `_hostile_peers.py` holds what they share.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from _hostile_peers import (
    SERVER,
    SLOW_ID,
    answered,
    ended,
    ids_answered,
    no_traceback,
    session,
    the_slow_call_is_answered_once,
)
from _proxy_helpers import RawClient
from _proxy_helpers import warm_proxy_argv as proxy_argv

pytestmark = pytest.mark.anyio
NESTED = 100_000
BIG = 70_000_000


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


# -- the client's side ----------------------------------------------------------------------


CLIENT_LINES = {
    "nested 100,000 deep": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": '
        + b"[" * NESTED
        + b"]" * NESTED
        + b'}, "id": 41}',
        41,
        -32600,
    ),
    "nested 100,000 deep as objects, its id at byte 20": (
        b'{"jsonrpc": "2.0", "id": 44, "method": "tools/call", "params": '
        + b'{"a": ' * NESTED
        + b"1"
        + b"}" * NESTED
        + b"}",
        44,
        -32600,
    ),
    "70 MB with a nested id before the real one": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": {"id": 777, '
        b'"blob": "' + b"A" * BIG + b'"}}, "id": 778}',
        778,
        -32600,
    ),
    "invalid UTF-8": (
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "caf\xe9"}, "id": 43}',
        43,
        -32700,
    ),
}


@pytest.mark.parametrize("case", CLIENT_LINES)
async def test_a_hostile_client_line_is_answered_under_its_own_id(
    case: str, tmp_path: Path
) -> None:
    line, request_id, code = CLIENT_LINES[case]
    async with session(tmp_path) as client:
        await client.send_line(line)
        answer = await client.answer(request_id)
        assert answer["error"]["code"] == code, answer
        await the_slow_call_is_answered_once(client)
        assert 777 not in ids_answered(client)  # never the id nested in params
        assert await client.close() == 0
    no_traceback(tmp_path)


# -- the server's side ----------------------------------------------------------------------


SERVER_ANSWERS = {
    "nested 100,000 deep": ("deep", {}, "malformed"),
    "70 MB with the id of the call in flight nested before its own": (
        "huge",
        {"other": SLOW_ID},
        "over the proxy's limit",
    ),
    "invalid UTF-8": ("bad_utf8", {}, "malformed"),
}


@pytest.mark.parametrize("case", SERVER_ANSWERS)
async def test_a_hostile_server_answer_fails_its_own_call_only(case: str, tmp_path: Path) -> None:
    tool, arguments, said = SERVER_ANSWERS[case]
    async with session(tmp_path) as client:
        answer = await client.request("tools/call", {"name": tool, "arguments": arguments})
        assert answer["error"]["code"] == -32603 and said in answer["error"]["message"], answer
        await the_slow_call_is_answered_once(client)
        assert await client.close() == 0
    no_traceback(tmp_path)


# -- output schemas -------------------------------------------------------------------------


HOSTILE_SCHEMAS = {
    "a pattern that backtracks in `re`": ("backtrack", "does not satisfy `pattern`"),
    "a pattern that backtracks in `regex` too": ("backtrack2", "longer than the bound of 2 s"),
    "a $ref loop": ("ref_loop", "`$ref`s loop"),
    "base64 where a number belongs": ("base64_count", "a string where the schema wants"),
}


@pytest.mark.parametrize("case", HOSTILE_SCHEMAS)
async def test_a_hostile_output_schema_fails_its_own_call_only(case: str, tmp_path: Path) -> None:
    """Regression (issue 36): `^(a+)+$` on 40 a's and `!` froze the proxy (no `ping`, no
    `--timeout`, no SIGTERM); a `$ref` loop failed the call with a bare RecursionError; a type
    mismatch quoted the content, base64 and all."""
    tool, said = HOSTILE_SCHEMAS[case]
    async with session(tmp_path) as client:
        await client.request("tools/list")  # the proxy learns each tool's output schema
        await client.send(
            {"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": tool}}
        )
        await asyncio.sleep(0.3)  # the check is under way
        assert "result" in await client.request("ping", timeout=20)
        answer = await answered(client, 60)
        message = answer["error"]["message"]
        assert answer["error"]["code"] == -32603 and f"`{tool}`" in message, answer
        assert said in message and "iVBOR" not in message and "Recursion" not in message, answer
        await the_slow_call_is_answered_once(client)
        assert ids_answered(client).count(60) == 1
        assert await client.close() == 0
    no_traceback(tmp_path)


async def test_sigterm_during_a_backtracking_check_ends_the_proxy(tmp_path: Path) -> None:
    """Regression (issue 36): SIGTERM did nothing while a `pattern` backtracked."""
    async with session(tmp_path) as client:
        await client.request("tools/list")
        await client.send(
            {"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": {"name": "backtrack2"}}
        )
        await asyncio.sleep(0.3)
        client.process.send_signal(signal.SIGTERM)
        assert await ended(client.process, tmp_path / "proxy.log") == 143
    no_traceback(tmp_path)


async def test_a_result_whose_routing_outlasts_the_timeout_is_still_answered(
    tmp_path: Path,
) -> None:
    """Regression (issue 36): a call's deadline ended when the server answered, so a routing
    step that never ended left the call unanswered for ever (not even a timeout error), while
    `ping` was answered. Routing has a deadline of its own: here the 2 s schema check outlasts
    `--timeout 1`."""
    client = await RawClient.start(proxy_argv([*SERVER], "--timeout", "1"), tmp_path)
    try:
        await client.initialize()
        await client.request("tools/list")
        answer = await client.request("tools/call", {"name": "backtrack2"}, timeout=20)
        assert answer["error"]["code"] == -32001, answer
        assert "routing the result took longer than 1s" in answer["error"]["message"], answer
        assert "result" in await client.request("ping")
        await asyncio.sleep(2.5)  # the check ends on its thread; nothing more is sent for it
        assert "result" in await client.request("ping")
        assert ids_answered(client).count(answer["id"]) == 1
        assert await client.close() == 0
    finally:
        if client.process.returncode is None:
            client.process.kill()
            await client.process.wait()
    no_traceback(tmp_path)


async def test_server_lines_like_notes_are_not_kept_past_a_cut(tmp_path: Path) -> None:
    """Regression (issue 36): after the note that says the rest was left out, a cut log kept
    the server's lines that begin with `[` (`[INFO] …`) as if they were the proxy's notes."""
    async with session(tmp_path, "--max-result-bytes", "65536") as client:
        answer = await client.request("tools/call", {"name": "bracketed"})
        (block,) = answer["result"]["content"]
        lines = block["text"].split("\n")
        (cut,) = [i for i, line in enumerate(lines) if line.startswith("[visiongate: this result")]
        assert lines[0].startswith("[INFO] request 0 ") and cut > 100
        assert not any(line.startswith("request") for line in lines[cut + 1 :])
        assert not any(line.startswith("[INFO]") for line in lines[cut + 1 :]), lines[cut:][:5]
        await the_slow_call_is_answered_once(client)
        assert await client.close() == 0
    no_traceback(tmp_path)
