"""Every command-line look-up that finds nothing says the near name in one line, exit 2 (issue 35).

Regression: `registry show openruter` and `catalog show anthropic claude-sonet-4-5` exited 1
with no did-you-mean; `catalog shwo`, `routes lsit` and a bad `--format` value printed
argparse's whole usage.
"""

from __future__ import annotations

import pytest
from _cli_helpers import run

CASES = [
    pytest.param(
        ["registry", "show", "openruter"],
        "visiongate registry show: error: `openruter` is not in providers.yaml: "
        "did you mean `openrouter`?",
        id="registry show",
    ),
    pytest.param(
        ["catalog", "show", "anthropic", "claude-sonet-4-5"],
        "visiongate catalog show: error: `anthropic/claude-sonet-4-5` is not in models.dev "
        "snapshot f3fc692 of 2026-07-02: did you mean `claude-sonnet-4-5`?",
        id="catalog show model",
    ),
    pytest.param(
        ["catalog", "show", "openruter"],
        "visiongate catalog show: error: no section `openruter` in models.dev snapshot f3fc692 "
        "of 2026-07-02; did you mean `openrouter`?",
        id="catalog show section",
    ),
    pytest.param(
        ["catalog", "shwo", "anthropic"],
        "visiongate catalog: error: unknown action `shwo`: did you mean `show`?",
        id="catalog action",
    ),
    pytest.param(
        ["routes", "lsit"],
        "visiongate routes: error: unknown action `lsit`: did you mean `list`?",
        id="routes action",
    ),
    pytest.param(
        ["lint", "--format", "jsn", "policies"],
        "visiongate lint: error: `--format` does not take `jsn`: did you mean `json`?",
        id="--format value",
    ),
    pytest.param(
        ["audit", "--format=jsno", "x.jsonl"],
        "visiongate audit: error: `--format` does not take `jsno`: did you mean `json`?",
        id="--format=value",
    ),
    pytest.param(
        ["proxy", "--client", "claude-dektop", "--provider", "p", "--model", "m", "--", "s"],
        "visiongate proxy: error: `--client` does not take `claude-dektop`: did you mean "
        "`claude-desktop`?",
        id="--client value",
    ),
]


@pytest.mark.parametrize(("argv", "line"), CASES)
def test_a_lookup_that_finds_nothing_is_one_line_with_the_near_name_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert len(err.splitlines()) == 1, err
    assert err.startswith(line), err
    assert "usage:" not in err and out == ""


def test_a_failed_lookup_with_json_still_prints_the_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "catalog", "show", "anthropic", "claude-sonet-4-5", "--json")
    assert code == 2 and '"verdict": "unknown"' in out
    assert err.count("\n") == 1 and "did you mean `claude-sonnet-4-5`?" in err


def test_a_name_that_is_found_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "registry", "show", "openrouter")[0] == 0
    assert run(capsys, "catalog", "show", "anthropic", "claude-sonnet-4-5")[0] == 0
    assert run(capsys, "lint", "--format", "json", "policies/default.yaml")[0] == 0
