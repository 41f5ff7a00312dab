"""Small cuts of the command line a newcomer meets (issue 28), one regression test each."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_helpers import TARGET, run


@pytest.mark.parametrize(
    ("program", "why"),
    [("nosuchserver", "no such file or directory"), ("server.py", "permission denied")],
)
def test_mcp_call_of_a_server_that_cannot_start_names_it(
    program: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if program == "server.py":  # a script without its executable bit
        (tmp_path / program).write_text("print('hi')\n")
        program = str(tmp_path / program)
    code, out, err = run(capsys, "mcp", "call", *TARGET, "--tool", "t", "--", program, "--flag")
    name = Path(program).name
    assert (code, out) == (2, "")
    assert (
        err == f"visiongate mcp call: error: cannot start the MCP server `{name} --flag`: {why}\n"
    )


def test_docs_check_calls_a_missing_page_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "docs", "--check", "--out", str(tmp_path / "site"))
    assert code == 1
    listed = [line for line in out.splitlines() if line.endswith((".md", ".svg"))]
    assert listed and all(line.startswith("missing: ") for line in listed), out
    assert "stale" not in "\n".join(listed)
