"""`visiongate audit` on hostile trace lines (issue 13): skipped and counted, never fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from visiongate.cli import main

DEEP = Path(__file__).parent / "data" / "audit" / "deep-array.jsonl"


def test_audit_reports_a_deeply_nested_line_instead_of_dying(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", str(DEEP)]) == 1  # a malformed line is a finding
    out = capsys.readouterr().out
    assert "1 malformed line(s) skipped" in out
    # Python 3.11 runs out of recursion decoding 5,000 levels; 3.12 and later decode them and
    # find an array where a record must be an object. Either way the line is named and why.
    assert (
        "deep-array.jsonl:1: not JSON: nested too deeply" in out
        or "deep-array.jsonl:1: not a JSON object" in out
    )
