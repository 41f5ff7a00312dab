"""Trace sinks: one line per record whatever it holds, many writers, rotation, failures."""

from __future__ import annotations

import fcntl
import gzip
import json
import logging
import multiprocessing
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from visiongate.engine import Gate, JsonlTrace
from visiongate.engine.trace import _jsonl as jsonl_module
from visiongate.engine.trace import encode_line
from visiongate.engine.trace._rotate import closed_files

# Every character `str.splitlines()` breaks at, plus the CRLF pair.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\r\n"


def _lines(*paths: Path) -> Iterator[bytes]:
    """Raw lines of trace files (gzipped or not), split on `\\n` only."""
    for path in paths:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        assert data.endswith(b"\n") or not data
        yield from data.split(b"\n")[:-1]


def _all_files(live: Path) -> list[Path]:
    return [*closed_files(live), live]


def test_a_record_holding_every_line_break_is_one_line_that_reads_back_whole() -> None:
    record = {"reason": f"a{LINE_BREAKS}b", "warnings": [LINE_BREAKS], LINE_BREAKS: 1}
    line = encode_line(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert len(line.decode("utf-8").splitlines()) == 1
    assert json.loads(line) == record


def test_lone_surrogates_nan_and_unknown_objects_still_make_one_json_line() -> None:
    line = encode_line({"text": "x\ud800y", "ratio": float("nan"), "path": Path("/a")})
    assert json.loads(line) == {"text": "x\ud800y", "ratio": None, "path": "/a"}


def _decide_many(path: Path, count: int, options: dict[str, Any]) -> None:
    gate = Gate.load(trace=JsonlTrace(path, **options))
    for number in range(count):
        gate.decide("anthropic", "claude-sonnet-4-5")
        gate.decide_facts("text", "vision", "unset", "accepts")
        if number % 50 == 0:
            gate.trace({"padding": "x" * 70_000})  # large lines make tearing likely if it can
    jsonl = gate._trace
    assert isinstance(jsonl, JsonlTrace)
    jsonl.close()


def _run_writers(path: Path, count: int, options: dict[str, Any]) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_decide_many, args=(path, count, options)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0


def _decoded(paths: list[Path]) -> list[dict[str, Any]]:
    records = []
    for line in _lines(*paths):
        records.append(json.loads(line))  # a torn or interleaved line would not decode
    return records


def test_four_writer_processes_append_whole_lines_with_unique_decision_ids(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decisions.jsonl"
    _run_writers(path, 400, {})
    records = _decoded([path])
    decisions = [r for r in records if "decision_id" in r]
    assert len(decisions) == 4 * 400 * 2
    assert sum(1 for r in records if "padding" in r) == 4 * 8
    assert len({r["decision_id"] for r in decisions}) == len(decisions)


def test_forked_workers_of_one_gate_never_share_decision_ids(tmp_path: Path) -> None:
    """Regression (issue 12): the id prefix was drawn at import, so forked workers of a
    parent that had already decided shared it and `audit --decision` found 4 decisions."""
    path = tmp_path / "decisions.jsonl"
    gate = Gate.load(trace=path)
    parent_id = gate.decide_facts("text", "vision", "unset", "accepts").decision_id

    def work() -> None:
        for _ in range(100):
            gate.decide("openai", "gpt-4o")

    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    ids = [record["decision_id"] for record in _decoded([path])]
    assert len(ids) == 401 and len(set(ids)) == 401
    prefixes = {decision_id.split("-")[0] for decision_id in ids}
    assert len(prefixes) == 5 and parent_id.split("-")[0] in prefixes


def test_rotation_across_four_processes_loses_no_record_and_gzips_closed_files(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decisions.jsonl"
    _run_writers(path, 400, {"max_bytes": 200_000, "compress": True})
    files = _all_files(path)
    assert len(files) > 10
    assert all(f.name.endswith(".jsonl.gz") for f in files[:-1])
    records = _decoded(files)
    decisions = [r for r in records if "decision_id" in r]
    assert len(decisions) == 4 * 400 * 2
    assert len({r["decision_id"] for r in decisions}) == len(decisions)
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.jsonl.2*.jsonl"))


def test_size_rotation_never_splits_a_record_and_keeps_the_backups_asked_for(
    tmp_path: Path,
) -> None:
    path = tmp_path / "decisions.jsonl"
    sink = JsonlTrace(path, max_bytes=5_000, backups=3)
    gate = Gate.load(trace=sink)
    for _ in range(200):
        gate.decide("anthropic", "claude-sonnet-4-5")
    gate.trace({"big": "y" * 20_000})  # larger than max_bytes: a file of its own
    gate.decide("openai", "gpt-4o")
    sink.close()
    closed = closed_files(path)
    assert len(closed) == 3
    assert all(f.stat().st_size <= 5_000 for f in closed if b"big" not in f.read_bytes())
    assert [json.loads(line).get("big") for line in _lines(closed[-1])] == ["y" * 20_000]
    assert [json.loads(line)["model"] for line in _lines(path)] == ["gpt-4o"]


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


def test_time_rotation_closes_the_file_at_each_period_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock(1_790_812_800.0)  # 2026-10-01T00:00:00Z
    monkeypatch.setattr(jsonl_module, "time", clock)
    path = tmp_path / "decisions.jsonl"
    sink = JsonlTrace(path, when="H")
    for hour in (0, 0, 1, 1, 1, 3):
        clock.now = 1_790_812_800.0 + hour * 3600 + 5
        sink({"hour": hour})
    # A record decided before the boundary but written after it goes to the new file and
    # does not close that file again.
    sink({"hour": 2, "late": True})
    sink({"hour": 3})
    sink.close()
    contents = [[json.loads(line)["hour"] for line in _lines(f)] for f in _all_files(path)]
    assert contents == [[0, 0], [1, 1, 1], [3, 2, 3]]


def test_an_unwritable_trace_never_stops_deciding_and_reports_what_was_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "logs"
    blocker.write_text("a file where the trace folder should be")
    sink = JsonlTrace(blocker / "decisions.jsonl")
    gate = Gate.load(trace=sink)
    untraced = Gate.load()
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        lanes = [gate.decide(p, m).lane for p, m in [("openai", "gpt-4o"), ("openai", "o3-mini")]]
        lanes += [gate.decide("openai", "gpt-4o").lane for _ in range(3)]
    assert lanes == [untraced.decide("openai", "gpt-4o").lane, "text"] + ["native"] * 3
    assert sink.failures.lost == 5
    warnings = [r.getMessage() for r in caplog.records if "decision trace" in r.getMessage()]
    assert len(warnings) == 1 and "deciding goes on" in warnings[0]  # once a minute at most
    blocker.unlink()
    gate.decide("openai", "gpt-4o")
    [record] = _decoded([blocker / "decisions.jsonl"])
    assert record["trace_errors"]["lost"] == 5
    assert record["trace_errors"]["error"] == "not a directory"
    gate.decide("openai", "gpt-4o")
    assert "trace_errors" not in _decoded([blocker / "decisions.jsonl"])[-1]


def test_a_full_disk_loses_records_but_never_a_decision() -> None:
    sink = JsonlTrace("/dev/full")
    gate = Gate.load(trace=sink)
    assert gate.decide("anthropic", "claude-sonnet-4-5").lane == "native"
    assert sink.failures.lost == 1
    assert sink.failures.pending() is not None
    sink.close()


def test_a_failing_callable_sink_is_counted_and_reported_in_the_next_record() -> None:
    received: list[dict[str, Any]] = []
    failing = [True, True, False]

    def sink(record: dict[str, Any]) -> None:
        if failing.pop(0):
            raise ConnectionError("collector down")
        received.append(record)

    gate = Gate.load(trace=sink)
    for _ in range(3):
        assert gate.decide_facts("text", "vision", "unset", "accepts").lane == "text"
    assert len(received) == 1
    assert received[0]["trace_errors"]["lost"] == 2
    assert "collector down" in received[0]["trace_errors"]["error"]


def test_a_trace_path_and_a_sink_together_both_receive_every_record(tmp_path: Path) -> None:
    received: list[dict[str, Any]] = []
    path = tmp_path / "decisions.jsonl"
    gate = Gate.load(trace=[path, received.append])
    gate.decide("openai", "gpt-4o")
    assert [r["decision_id"] for r in _decoded([path])] == [received[0]["decision_id"]]


def test_a_forked_child_takes_its_own_rotation_lock(tmp_path: Path) -> None:
    """flock locks belong to the open file: a child using the descriptor it inherited would
    hold the parent's very lock and write through a rotation in progress."""
    path = tmp_path / "decisions.jsonl"
    sink = JsonlTrace(path, max_bytes=10_000)
    sink({"before": "fork"})
    assert sink._lock_fd is not None
    fcntl.flock(sink._lock_fd, fcntl.LOCK_EX)  # as while this process rotates the file
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        sink({"in": "child"})
        os._exit(0)
    time.sleep(0.5)
    assert b"child" not in path.read_bytes()  # the child waits for the rotation to end
    fcntl.flock(sink._lock_fd, fcntl.LOCK_UN)
    os.waitpid(pid, 0)
    assert b"child" in path.read_bytes()
    sink.close()


def test_records_follow_the_path_after_an_outside_rotation(tmp_path: Path) -> None:
    """logrotate renames the file (no copytruncate): later records go to the new file."""
    path = tmp_path / "decisions.jsonl"
    sink = JsonlTrace(path)
    sink({"n": 1})
    path.rename(tmp_path / "decisions.jsonl.1")
    sink({"n": 2})
    path.unlink()
    sink({"n": 3})
    sink.close()
    assert [json.loads(line)["n"] for line in _lines(tmp_path / "decisions.jsonl.1")] == [1]
    assert [json.loads(line)["n"] for line in _lines(path)] == [3]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"when": "fortnight"}, "`when` must be one of S, M, H, D, midnight: `fortnight`"),
        ({"max_bytes": 0}, "`max_bytes` must be positive, not `0`"),
        ({"interval": 0}, "`interval` must be at least 1, not `0`"),
        ({"backups": -1}, "`backups` must be 0 or more, not `-1`"),
    ],
)
def test_rotation_options_are_checked(
    tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        JsonlTrace(tmp_path / "decisions.jsonl", **options)
