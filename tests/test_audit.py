"""`visiongate audit`: trace summaries, malformed lines kept apart, one decision explained."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from visiongate.cli import main
from visiongate.engine import Gate
from visiongate.engine.tooling.audit._read import parse_time, read_traces, summarize, within
from visiongate.engine.tooling.audit._report import explain_record

OLD_SHA = "0" * 64


def _records() -> list[dict[str, Any]]:
    """Real records from the gate, at fixed times, plus one under an older policy version."""
    auto = Gate.load()
    native = Gate.load(config={"agent": {"image_input_mode": "native"}})
    records = [
        auto.decide(provider="openai", model="gpt-4o").record(
            source="mcp", execution={"attached": 2, "bytes": 1000}
        ),
        auto.decide(provider="anthropic", model="claude-imaginary-9").record(source="browser"),
        native.decide(provider="openai", model="o3-mini").record(
            source="computer_use", execution={"attached": 1}
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
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(Path(__file__).parent.parent)  # records name `policies/default.yaml`
    lines = [json.dumps(record) for record in _records()]
    lines.insert(2, "{this is not json")
    lines.insert(4, json.dumps({"schema_version": 1, "decision_id": "x", "lane": "native"}))
    lines.insert(5, "")
    lines.append(json.dumps({**_records()[0], "schema_version": 2}))
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_malformed_lines_are_numbered_and_everything_else_counts(trace: Path) -> None:
    records, malformed = read_traces([trace])
    assert len(records) == 5
    assert [(m.line, m.problem.split(":")[0]) for m in malformed] == [
        (3, "not JSON"),
        (5, "missing `timestamp`, `facts`, `policy`"),
        (9, "unsupported schema_version `2` (this version reads 1)"),
    ]


def test_summary_counts_and_findings(trace: Path) -> None:
    summary = summarize(*read_traces([trace]))
    assert summary.lanes == {"native": 3, "text": 2}
    assert summary.rules["native-mode"] == 2
    assert summary.sources == {"mcp": 1, "browser": 1, "computer_use": 1, "(not recorded)": 2}
    assert summary.models["openai/gpt-4o"] == 1 and summary.models["(facts given directly)"] == 1
    [stale] = summary.stale
    assert stale.policy["sha256"] == OLD_SHA
    current = [use for use in summary.policies if use.current]
    assert len(current) == 1 and current[0].count == 4
    unconfirmed = {(r.data["model"], r.facts["catalog"]) for r in summary.unconfirmed_native}
    assert unconfirmed == {("o3-mini", "no_vision"), ("claude-imaginary-9", "unknown")}
    assert summary.warnings == {"catalog is stale": 1}
    assert summary.execution == {"attached": 3, "bytes": 1000}


def test_since_and_until(trace: Path) -> None:
    records, _ = read_traces([trace])
    chosen = within(records, parse_time("2026-11-30T10:00:00Z"), parse_time("2026-11-30T11:30"))
    assert [r.timestamp.hour for r in chosen] == [10, 11]
    assert len(within(records, parse_time("2026-12-01"), None)) == 0


def test_explain_one_decision_in_plain_words(trace: Path) -> None:
    records, _ = read_traces([trace])
    record = next(r for r in records if r.policy["sha256"] == OLD_SHA)
    text = explain_record(record)
    assert f"Decision {record.decision_id}" in text
    assert "for model `claude-imaginary-9` of provider `anthropic` took the native lane" in text
    assert "Why: rule `native-mode` decided:" in text
    assert "  catalog = unknown  (models.dev snapshot" in text
    assert "the catalog does not confirm this model reads images" in text
    assert "the file has changed since (now sha256" in text
    assert "Warnings: catalog is stale" in text


def test_cli(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(trace)]) == 1  # malformed lines were found
    out = capsys.readouterr().out
    assert out.startswith(
        "5 decision(s), 2026-11-30T09:00:00Z .. 2026-11-30T13:00:00Z; 3 malformed"
    )
    assert "NOT the current content" in out
    assert f"{trace.as_posix()}:3: not JSON" in out
    assert main(["audit", str(trace), "--json", "--since", "2026-11-30T12:00:00Z"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["decisions"] == 2 and len(document["malformed"]) == 3
    records, _ = read_traces([trace])
    assert main(["audit", str(trace), "--decision", records[0].decision_id]) == 0
    assert "took the native lane" in capsys.readouterr().out
    assert main(["audit", str(trace), "--decision", "no-such-id"]) == 1
    assert main(["audit", str(trace), "--since", "yesterday"]) == 2


def test_clean_trace_exits_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).parent.parent)
    path = tmp_path / "trace.jsonl"
    gate = Gate.load(trace=path)
    gate.decide(provider="openai", model="gpt-4o")
    assert main(["audit", str(path)]) == 0


def test_explaining_a_routed_record_names_each_image_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "schema_version": 1,
        "decision_id": "abc-00000001",
        "timestamp": "2026-11-30T09:00:00.000000Z",
        "policy": {"name": "default", "version": "1.0.0", "sha256": "0" * 64, "path": "x.yaml"},
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "facts": {"mode": "auto", "catalog": "vision", "aux": "unset", "path": "accepts"},
        "rule": "auto-vision-model",
        "matched": ["auto-vision-model"],
        "reason": "a vision model",
        "lane": "native",
        "warnings": [],
        "source": "mcp",
        "execution": {
            "action": "attach",
            "attached": [
                {"index": 1, "size": [1568, 882], "original_size": [2560, 1440],
                 "media_type": "image/jpeg", "source_media_type": "image/png",
                 "bytes_before": 470580, "bytes_after": 189155}
            ],
            "refused": [{"index": 2, "reason": "refused: svg is not a raster image"}],
            "media_paths": ["/cache/a.png"],
        },
        "sanitizer": {"text": {"tag_chars": 60, "flags_kept": 1}},
    }  # fmt: skip
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps(record) + "\n")
    assert main(["audit", str(trace), "--decision", "abc-00000001"]) == 0
    out = capsys.readouterr().out
    assert "image 1 attached: 2560x1440 image/png sent as 1568x882 image/jpeg" in out
    assert "image 2 not attached: refused: svg is not a raster image" in out
    assert "MEDIA:/cache/a.png" in out
    assert "Sanitizer: text: 60 tag chars, 1 flags kept." in out
