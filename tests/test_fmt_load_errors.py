"""`fmt` on a file that is not valid YAML says what `lint` says (issue 28): the loader's
`file:line:col: error[code]` findings with their hint, not the YAML library's raw text (`in
"<unicode string>"`, advice to turn the duplicate-key check off)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli_helpers import POLICIES, run

DEFAULT = (POLICIES / "default.yaml").read_text()

BROKEN = {
    "a duplicate key": (
        "hit_policy: unique\n",
        "hit_policy: unique\nhit_policy: first\n",
        "duplicate-key",
    ),
    "a syntax error": ("hit_policy: unique\n", "hit_policy: [unique\n", "yaml-syntax"),
    "an explicit tag": (
        "hit_policy: unique\n",
        "hit_policy: !!python/name:os.system unique\n",
        "yaml-tag",
    ),
    "a recursive alias": ("hit_policy: unique\n", "hit_policy: &a [*a]\n", "recursive-alias"),
}


@pytest.mark.parametrize(("old", "new", "code"), BROKEN.values(), ids=BROKEN)
def test_fmt_reports_the_load_diagnostics_lint_reports(
    old: str, new: str, code: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert DEFAULT.count(old) == 1
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT.replace(old, new))
    _lint_code, lint_out, _ = run(capsys, "lint", str(policy))
    expected = [line for line in lint_out.splitlines() if ": error[" in line]
    assert expected and f"error[{code}]" in expected[0]
    status, out, err = run(capsys, "fmt", str(policy))
    assert status == 3
    found = [line for line in err.splitlines() if ": error[" in line]
    assert found == expected
    assert "unicode string" not in err and "suppress" not in err
    assert "help: " in err and "0 file(s) reformatted" in out
    assert policy.read_text() == DEFAULT.replace(old, new)  # left as it was
