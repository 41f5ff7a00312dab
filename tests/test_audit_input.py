"""`visiongate audit` on hostile trace lines (issue 13): skipped and counted, never fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine.tooling.audit._read import read_traces

DEEP = Path(__file__).parent / "data" / "audit" / "deep-array.jsonl"


def test_a_deeply_nested_json_line_is_skipped_and_counted() -> None:
    records, malformed = read_traces([DEEP])
    assert records == []
    assert [(bad.line, bad.problem) for bad in malformed] == [
        (1, "not a record: JSON nested too deeply")
    ]


def test_audit_reports_a_deeply_nested_line_instead_of_dying(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["audit", str(DEEP)])
    assert "JSON nested too deeply" in capsys.readouterr().out
