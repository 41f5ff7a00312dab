"""The one home for newline framing (`visiongate.kernel._framing`) and the bounded top-level id scan
of a message that cannot be parsed (`adapters.proxy._idscan`), as tables (issues 26, 29)."""

from __future__ import annotations

import pytest

from visiongate.adapters.proxy._idscan import TopLevelId, top_level_id
from visiongate.adapters.proxy._jsonrpc import MAX_DEPTH, parse
from visiongate.kernel._framing import Lines, LineTooLong, Oversized

FRAMING = [
    # (chunks, limit, the (number, line) pairs out, the oversized ones as (number, size))
    ([b"a\nb\n"], 10, [(1, b"a"), (2, b"b")], []),
    ([b"a", b"b\n", b"c"], 10, [(1, b"ab")], []),
    ([b"\n\n \t\r\n\na\n"], 10, [(5, b"a")], []),
    ([b"\n" * 70_000 + b"x\n"], 10, [(70_001, b"x")], []),
    ([b"  ", b" q\n"], 10, [(1, b"   q")], []),
    ([b"x" * 20 + b"\nok\n"], 10, [(2, b"ok")], [(1, 20)]),
    ([b"x" * 8, b"y" * 8, b"z\nok\n"], 10, [(2, b"ok")], [(1, 17)]),
]


@pytest.mark.parametrize(("chunks", "limit", "lines", "oversized"), FRAMING)
def test_lines_from_chunks(
    chunks: list[bytes],
    limit: int,
    lines: list[tuple[int, bytes]],
    oversized: list[tuple[int, int]],
) -> None:
    framing = Lines(limit)
    out = [item for chunk in chunks for item in framing.feed(chunk)]
    assert [(n, line) for n, line in out if isinstance(line, bytes)] == lines
    assert [(n, line.size) for n, line in out if isinstance(line, Oversized)] == oversized


def test_the_last_line_without_its_newline_comes_only_when_asked() -> None:
    framing = Lines(10)
    assert framing.feed(b"a\nlast") == [(1, b"a")]
    assert framing.finish() == [(2, b"last")]


def test_raise_gives_up_at_the_limit_without_waiting_for_a_newline() -> None:
    framing = Lines(10, oversized="raise")
    with pytest.raises(LineTooLong) as raised:
        framing.feed(b"x" * 6)
        framing.feed(b"y" * 6)  # no newline in sight: the server may never send one
    assert raised.value.size == 12


def test_the_skim_sees_every_byte_of_an_oversized_line() -> None:
    framing = Lines(16, skim=TopLevelId)
    chunks = [b'{"params": {"id": 1, "x": "', b"a" * 100, b'"}, "id": 2}\n']
    (out,) = [item for chunk in chunks for item in framing.feed(chunk)]
    assert out == (1, Oversized(len(b"".join(chunks)) - 1, 2))


NESTED = b"[" * 100_000 + b"]" * 100_000
TOP_LEVEL_IDS = [
    # (message, the id answered under, or None: not answered)
    (b'{"jsonrpc": "2.0", "id": 5, "method": "x"}', 5),
    (b'{"params": {"id": 777}, "id": 778}', 778),
    (b'{"params": {"arguments": {"id": 1, "s": "a\\"}\\\\"}}, "id": "abc"}', "abc"),
    (b'{"params": ' + NESTED + b', "id": 42}', 42),
    (b'{"i\\u0064": 9}', 9),
    (b'{"a": "caf\xe9", "id": 4}', 4),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {', 8),
    (b'{"id": 1, "id": 2}', None),  # two ids: which one is a guess
    (b'[{"id": 1}]', None),  # a batch has no single id
    (b'{"id": true}', None),
    (b'{"id": 1.5}', None),
    (b'{"id": null}', None),
    (b'{"id": {"id": 3}}', None),
    (b'{"x": {]], "id": 1}', None),  # broken before the id
    (b'{"params": {"id": 7}}', None),  # only a nested one
    (b'{"id": "' + b"x" * 600 + b'"}', None),  # longer than any id worth answering
]


@pytest.mark.parametrize(("message", "found"), TOP_LEVEL_IDS)
def test_the_top_level_id(message: bytes, found: object) -> None:
    assert top_level_id(message) == found
    scan = TopLevelId()
    for start in range(0, len(message), 3):  # the same, fed in pieces
        scan.feed(message[start : start + 3])
    assert scan.result() == found


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_the_scan_gives_up_within_its_budget() -> None:
    crowded = b'{"a": [' + b"[], " * 400_000 + b'[]], "id": 1}'
    assert top_level_id(crowded) is None
    assert top_level_id(crowded, budget=10_000_000) == 1


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": ' + NESTED + b"}", "nested"),
        (
            b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": '
            + b"[" * (MAX_DEPTH + 1)
            + b"]" * (MAX_DEPTH + 1)
            + b"}",
            "nested",
        ),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "caf\xe9"}', "not JSON"),
    ],
)
def test_a_message_too_deep_or_not_utf8_is_invalid_with_its_top_level_id(
    line: bytes, problem: str
) -> None:
    (message,) = parse(line)
    assert message.kind == "invalid" and message.id == 3 and message.problem.startswith(problem)


@pytest.mark.parametrize("key", [b'"a":', b'"params" : ', b'"": '], ids=["a", "spaced", "empty"])
def test_a_request_nested_100000_deep_as_objects_keeps_its_id_from_the_start(key: bytes) -> None:
    """Issue 36 item 12: three scan steps a level ran the id scan out of budget, so the
    request was logged and never answered; a run of `{"key":` is one step now."""
    line = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":'
    line += (b"{" + key) * 100_000 + b"1" + b"}" * 100_001
    (message,) = parse(line)
    assert message.kind == "invalid" and message.problem.startswith("nested")
    assert message.id == 7


def test_a_message_at_the_depth_limit_is_parsed() -> None:
    params = b"[" * (MAX_DEPTH - 2) + b"]" * (MAX_DEPTH - 2)
    (message,) = parse(b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": ' + params + b"}")
    assert message.kind == "request"
