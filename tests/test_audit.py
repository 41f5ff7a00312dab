"""`visiongate audit`: traces read as streams, aggregated, checked, one decision explained."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from visiongate.cli import main
from visiongate.engine import Gate, JsonlTrace
from visiongate.engine._load import bundled_policy_text
from visiongate.engine.tooling.audit._aggregate import Query, aggregate
from visiongate.engine.tooling.audit._explain import explain_record
from visiongate.engine.tooling.audit._find import find_decision
from visiongate.engine.tooling.audit._inputs import expand
from visiongate.engine.tooling.audit._read import parse_time

OLD_SHA = "0" * 64


def _records() -> list[dict[str, Any]]:
    """Real records from the gate, at fixed times, plus one under an older policy version."""
    auto = Gate.load()
    native = Gate.load(config={"agent": {"image_input_mode": "native"}})
    records = [
        auto.decide(provider="openai", model="gpt-4o").record(
            source="mcp", execution={"attached": [{"index": 1}, {"index": 2}], "bytes_after": 1000}
        ),
        auto.decide(provider="anthropic", model="claude-imaginary-9").record(source="browser"),
        native.decide(provider="openai", model="o3-mini").record(
            source="computer_use", execution={"attached": [{"index": 1}]}
        ),
        auto.decide_facts("text", "vision", "unset", "accepts").record(),
    ]
    old = native.decide(provider="anthropic", model="claude-imaginary-9").record(
        warnings=["catalog is stale"]
    )
    old["policy"] = {**old["policy"], "sha256": OLD_SHA, "version": "0.9.0"}
    records.append(old)
    for hour, record in enumerate(records, start=9):
        record["timestamp"] = f"2026-11-30T{hour:02d}:00:00.000000Z"
    return records


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return _records()


@pytest.fixture
def trace(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    lines = [json.dumps(record) for record in records]
    lines.insert(2, "{this is not json")
    lines.insert(4, json.dumps({"schema_version": 1, "decision_id": "x", "lane": "native"}))
    lines.insert(5, "")
    lines.append(json.dumps({**records[0], "schema_version": 2}))
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _audit(*paths: Path | str, **query: Any) -> Any:
    return aggregate(expand([str(p) for p in paths]), Query(**query))


def test_malformed_lines_are_numbered_and_everything_else_counts(trace: Path) -> None:
    result = _audit(trace)
    assert result.decisions == 5
    assert [(m.line, m.problem.split(":")[0]) for m in result.malformed_lines] == [
        (3, "not JSON"),
        (5, "missing `timestamp`, `facts`, `policy`"),
        (9, "unsupported schema_version `2` (this version reads 1)"),
    ]


def test_summary_counts_and_findings(trace: Path) -> None:
    result = _audit(trace)
    assert result.counts("lane") == {"native": 3, "text": 2}
    assert result.counts("rule")["native-mode"] == 2
    assert result.counts("source") == {
        "mcp": 1, "browser": 1, "computer_use": 1, "(not recorded)": 2
    }  # fmt: skip
    assert result.counts("model")["openai/gpt-4o"] == 1
    assert result.counts("model")["(facts given directly)"] == 1
    assert result.stale.count == 1 and result.stale.samples[0].policy.sha256 == OLD_SHA
    [current] = [use for use in result.policies if use.status.standing.value == "current"]
    assert current.count == 4 and current.policy.bundled == "default"
    unconfirmed = {(s.model, s.catalog) for s in result.unconfirmed_native.samples}
    # Native mode on an unknown alias is the operator's override, not a finding; on a model
    # the catalog calls text-only it still is.
    assert unconfirmed == {("o3-mini", "no_vision")}
    # The native decision on text-only o3-mini carries the operator's contradiction (issue 35).
    native_on_text = (
        "`agent.image_input_mode` is `native`, but models.dev snapshot f3fc692 of 2026-07-02 "
        "lists `openai/o3-mini` as text-only (input=[text]): its provider refuses images sent "
        "to it"
    )
    assert result.warnings == {"catalog is stale": 1, native_on_text: 1}
    assert result.execution == {"attached": 3, "bytes_after": 1000}
    assert result.findings == 1 + 1 + 3


def test_since_until_and_filters(trace: Path) -> None:
    since, until = parse_time("2026-11-30T10:00:00Z"), parse_time("2026-11-30T11:30")
    assert _audit(trace, since=since, until=until).decisions == 2
    assert _audit(trace, since=parse_time("2026-12-01")).decisions == 0
    assert _audit(trace, providers=frozenset({"openai"})).decisions == 2
    assert _audit(trace, models=frozenset({"anthropic/claude-imaginary-9"})).decisions == 2
    assert _audit(trace, lanes=frozenset({"text"}), rules=frozenset({"text-mode"})).decisions == 1
    assert _audit(trace, sources=frozenset({"(not recorded)"})).decisions == 2
    assert _audit(trace, policy_shas=("0000",)).decisions == 1


def test_group_by_counts_lanes_per_group(trace: Path) -> None:
    result = _audit(trace, group_by=("provider", "hour"))
    assert result.groups[("openai", "2026-11-30T09")] == {"native": 1}
    assert result.groups[("(facts given directly)", "2026-11-30T12")] == {"text": 1}
    by_rule = _audit(trace, group_by=("rule",)).groups
    assert by_rule[("native-mode",)] == {"native": 2}


def _explained(trace: Path, decision_id: str, override: str | None = None) -> str:
    search = find_decision(expand([str(trace)]), decision_id)
    [record] = search.found
    return explain_record(record, override)


def test_explain_one_decision_in_plain_words(records: list[dict[str, Any]], trace: Path) -> None:
    old = records[-1]
    text = _explained(trace, old["decision_id"])
    assert f"Decision {old['decision_id']}" in text
    assert "for model `claude-imaginary-9` of provider `anthropic` took the native lane" in text
    assert "Why: rule `native-mode` decided:" in text
    assert "  catalog = unknown  (models.dev snapshot" in text
    assert "the catalog does not confirm this model reads images" in text
    assert "bundled default (visiongate" in text and "has changed since (now sha256" in text
    assert "Warnings: catalog is stale" in text


def test_cli_exit_codes_and_formats(
    records: list[dict[str, Any]], trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", str(trace)]) == 1  # findings
    out = capsys.readouterr().out
    assert out.startswith(
        "5 decision(s), 2026-11-30T09:00:00Z .. 2026-11-30T13:00:00Z; 3 malformed"
    )
    assert "NOT the current content" in out
    assert f"{trace.as_posix()}:3: not JSON" in out
    assert main(["audit", str(trace), "--json", "--since", "2026-11-30T12:00:00Z"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["decisions"] == 2 and document["malformed"]["count"] == 3
    assert main(["audit", str(trace), "--group-by", "lane", "--format", "csv"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "lane,decisions,native,text", "native,3,3,0", "text,2,0,2"
    ]  # fmt: skip
    assert main(["audit", str(trace), "--decision", records[0]["decision_id"]]) == 0
    assert "took the native lane" in capsys.readouterr().out
    assert main(["audit", str(trace), "--decision", "no-such-id"]) == 2  # a bad input
    assert main(["audit", str(trace), "--since", "yesterday"]) == 2
    assert main(["audit", str(trace), "--group-by", "colour"]) == 2


def test_a_missing_file_is_a_usage_error_not_a_malformed_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: a missing file was reported as `1 malformed line ... missing.jsonl:0`."""
    assert main(["audit", str(tmp_path / "missing.jsonl")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"no such file: `{tmp_path / 'missing.jsonl'}`" in captured.err
    assert main(["audit", str(tmp_path / "*.jsonl")]) == 2
    assert "no file matches" in capsys.readouterr().err


def test_clean_trace_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    gate = Gate.load(trace=path)
    gate.decide(provider="openai", model="gpt-4o")
    assert main(["audit", str(path)]) == 0


def test_globs_directories_gzip_and_stdin_are_read_alike(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "rotated"
    folder.mkdir()
    data = trace.read_bytes()
    (folder / "decisions.20261130T000000000000Z.jsonl.gz").write_bytes(gzip.compress(data))
    (folder / "decisions.jsonl").write_bytes(data)
    (folder / "decisions.jsonl.lock").write_bytes(b"not a trace")
    assert _audit(folder).decisions == 10
    assert _audit(f"{folder}/*.gz").decisions == 5
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(data)))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert _audit("-").decisions == 5


def test_a_truncated_gzip_is_an_input_error_after_what_could_be_read(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(trace.read_bytes() * 50)[:-40])
    assert main(["audit", str(broken)]) == 2
    captured = capsys.readouterr()
    assert "decision(s)" in captured.out
    assert f"cannot read `{broken.as_posix()}` to its end" in captured.err


def test_a_deeply_nested_line_is_skipped_and_counted_never_fatal(trace: Path) -> None:
    """Regression (issue 13): a line holding a deeply nested array raised RecursionError."""
    with trace.open("ab") as stream:
        stream.write(b"[" * 200_000 + b"]" * 200_000 + b"\n")
        stream.write(b'{"decision_id": ' + b"[" * 100_000 + b"\n")
    result = _audit(trace)
    assert result.decisions == 5
    assert [m.problem for m in result.malformed_lines[-2:]] == ["not JSON: nested too deeply"] * 2


def test_a_line_longer_than_the_limit_is_one_malformed_line(
    records: list[dict[str, Any]], trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from visiongate.engine.tooling.audit import _inputs

    monkeypatch.setattr(_inputs, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(_inputs, "CHUNK_BYTES", 1024)
    with trace.open("ab") as stream:
        stream.write(b'{"x": "' + b"a" * 20_000 + b'"}\n')
        stream.write((json.dumps(records[0]) + "\n").encode())
    result = _audit(trace)
    assert result.decisions == 6
    assert result.malformed_lines[-1].line == 10
    assert result.malformed_lines[-1].problem.startswith("line longer than")


def test_a_record_holding_unicode_line_separators_reads_as_one_record(tmp_path: Path) -> None:
    """Regression (issue 12): records holding U+2028/U+2029/NEL from server strings were
    written raw and read back with `splitlines()`, so one decision became two bad lines."""
    path = tmp_path / "trace.jsonl"
    gate = Gate.load(trace=JsonlTrace(path))
    decision = gate.decide("anthropic", "claude-sonnet-4-5", trace=False)
    gate.trace(decision.record(source="mcp", warnings=["a\u2028b\u2029c\x85d\re\x0bf"]))
    result = _audit(path)
    assert (result.decisions, result.malformed.count) == (1, 0)
    assert result.warnings == {"a\u2028b\u2029c\x85d\re\x0bf": 1}


def test_duplicate_ids_are_all_listed(
    records: list[dict[str, Any]], trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = records[0]
    with trace.open("a") as stream:
        stream.write(json.dumps(record) + "\n")
    assert main(["audit", str(trace), "--decision", record["decision_id"]]) == 1
    err = capsys.readouterr().err
    assert f"2 decisions with id `{record['decision_id']}`" in err
    assert f"{trace.as_posix()}:1]" in err and f"{trace.as_posix()}:10]" in err


def test_an_id_prefix_finds_the_decisions_it_names(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    path = tmp_path / "trace.jsonl"
    ids = ["aaaa1111-00000001", "aaaa2222-00000001"]
    path.write_text("".join(json.dumps({**records[0], "decision_id": i}) + "\n" for i in ids))
    assert [r.decision_id for r in find_decision(expand([str(path)]), "aaaa1").found] == ids[:1]
    both = find_decision(expand([str(path)]), "aaaa")
    assert (both.exact, both.prefixed_count) == ((), 2)


def test_audit_run_from_another_repository_never_reports_a_bundled_policy_as_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 16): the bundled policy was recorded as `policies/default.yaml` and
    compared with whatever file had that name in the directory the audit ran in."""
    path = tmp_path / "trace.jsonl"
    Gate.load(trace=path).decide("openai", "gpt-4o")
    legacy = json.loads(path.read_text())
    legacy["policy"] = {**legacy["policy"], "path": "policies/default.yaml"}
    del legacy["policy"]["bundled"], legacy["policy"]["package_version"]
    with path.open("a") as stream:
        stream.write(json.dumps(legacy) + "\n")
    other = tmp_path / "other-repo"
    (other / "policies").mkdir(parents=True)
    (other / "policies" / "default.yaml").write_text(bundled_policy_text("default") + "# edit\n")
    monkeypatch.chdir(other)
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NOT the current content" not in out
    assert "(bundled default (visiongate " in out and "the current content" in out


def test_records_from_another_release_are_not_flagged(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    Gate.load(trace=path).decide("openai", "gpt-4o")
    record = json.loads(path.read_text())
    record["policy"].update(sha256=OLD_SHA, package_version="0.0.1")
    path.write_text(json.dumps(record) + "\n")
    result = _audit(path)
    assert result.stale.count == 0
    assert result.policies[0].status.standing.value == "other-release"


def test_a_policy_file_is_recorded_by_absolute_path_and_compared_by_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("mine.yaml").write_text(bundled_policy_text("default").replace("default", "mine", 1))
    path = tmp_path / "trace.jsonl"
    Gate.load("mine.yaml", trace=path).decide("openai", "gpt-4o")
    assert json.loads(path.read_text())["policy"]["path"] == str(tmp_path / "mine.yaml")
    assert _audit(path).stale.count == 0
    Path("mine.yaml").write_text(Path("mine.yaml").read_text() + "# changed\n")
    monkeypatch.chdir("/")
    assert _audit(path).stale.count == 1


def test_a_bundled_policy_is_recorded_as_bundled_with_the_package_version() -> None:
    policy = Gate.load("examples/never-pixels").decide("openai", "gpt-4o").record()["policy"]
    assert policy["bundled"] == "examples/never-pixels"
    assert policy["package_version"] and "path" not in policy


def test_records_lost_by_the_writer_are_shown_as_trace_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trace.jsonl"
    gate = Gate.load(trace=path)
    record = gate.decide("openai", "gpt-4o", trace=False).record(trace_errors={"lost": 7})
    gate.trace(record)
    assert main(["audit", str(path)]) == 0
    assert "the writers reported 7 record(s) they could not write" in capsys.readouterr().out


def test_a_policy_to_compare_with_must_be_a_valid_policy(
    trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("policy: [unclosed\n")
    assert main(["audit", str(trace), "--policy", str(broken)]) == 3
    assert "broken.yaml" in capsys.readouterr().err
    same = tmp_path / "default.yaml"
    same.write_text(bundled_policy_text("default"))
    assert main(["audit", str(trace), "--policy", str(same), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["stale_policy"]["count"] == 1


def test_a_reader_that_stops_early_gets_no_traceback(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """Regression: `visiongate audit ... | head` ended in a BrokenPipeError traceback."""
    import subprocess

    path = tmp_path / "trace.jsonl"
    with path.open("w") as stream:
        for hour in range(4000):
            day, hour_of_day = divmod(hour, 24)
            stamp = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{hour_of_day:02d}:00:00Z"
            stream.write(json.dumps({**records[0], "timestamp": stamp}) + "\n")
    child = subprocess.Popen(
        [sys.executable, "-m", "visiongate", "audit", str(path), "--group-by", "hour"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().startswith(b"4000 decision(s)")
    child.stdout.close()
    with child.stderr:
        assert b"Traceback" not in child.stderr.read()
    assert child.wait(timeout=60) == 0


def test_reading_in_parallel_gives_the_single_reader_result(
    trace: Path, tmp_path: Path, records: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from visiongate.engine.tooling.audit import _parallel

    big = tmp_path / "big.jsonl"
    text = trace.read_text()
    big.write_text(text * 7 + json.dumps(records[0]))  # the last line without its newline
    inputs = expand([str(big), str(trace), str(big)])
    assert trace.stat().st_size < 20_000 < big.stat().st_size
    monkeypatch.setattr(_parallel, "SPLIT_BYTES", 20_000)
    assert [(p.index, p.stop is None) for p in _parallel.plan(inputs, 3)] == [
        (0, False), (0, False), (0, True), (1, True), (2, False), (2, False), (2, True)
    ]  # fmt: skip
    query = Query(group_by=("provider", "hour"))
    single = aggregate(inputs, query)
    several = _parallel.aggregate_in_parallel(inputs, query, None, 3)
    assert several == single
    assert [m.line for m in several.malformed_lines][:6] == [3, 5, 9, 12, 14, 18]


def test_an_amended_record_is_the_same_decision_counted_once(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trace.jsonl"
    first = records[0]
    amended = {**first, "amended": "rendered for `openai-chat`, which withheld 1 image(s)"}
    path.write_text(json.dumps(first) + "\n" + json.dumps(amended) + "\n")
    result = _audit(path)
    assert (result.decisions, result.amendments) == (1, 1)
    assert main(["audit", str(path), "--decision", first["decision_id"]]) == 0
    out = capsys.readouterr().out
    assert "(trace.jsonl line 2)" in out.replace(path.as_posix(), "trace.jsonl")
    assert "Amended: rendered for `openai-chat`, which withheld 1 image(s)" in out


def test_a_record_on_an_unverified_route_is_counted(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """The fact values come from the vocabulary (issue 11 added `path=unverified`)."""
    path = tmp_path / "trace.jsonl"
    record = {**records[0], "facts": {**records[0]["facts"], "path": "unverified"}}
    path.write_text(json.dumps(record) + "\n")
    result = _audit(path, group_by=("path",))
    assert (result.decisions, result.malformed.count) == (1, 0)
    assert list(result.groups) == [("unverified",)]


def test_runs_of_empty_lines_are_skipped_and_still_counted_in_line_numbers(
    records: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Regression (issue 26): a gzip of empty lines (486 KB, 500 M lines) took 54 s, one
    Python step per line; runs of blank lines are now skipped whole, numbers kept exact."""
    trace = tmp_path / "blank.jsonl.gz"
    with gzip.open(trace, "wb") as stream:
        stream.write(b"\n" * 3_000_000 + b" \t\r\n" * 5 + b"not json\n")
        stream.write(b"\n" * 70_000 + (json.dumps(records[0]) + "\n").encode() + b"\n" * 9)
    result = _audit(trace)
    assert result.decisions == 1
    (malformed,) = result.malformed_lines
    assert malformed.line == 3_000_006 and malformed.problem.startswith("not JSON")
    (found,) = find_decision(expand([str(trace)]), records[0]["decision_id"]).found
    assert found.line == 3_070_007
