"""`visiongate diff`: every cell whose lane changes, from files and from git revisions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine.tooling._diff import SourceError, diff_sources, read_source

ROOT = Path(__file__).parent.parent
DEFAULT = (ROOT / "policies" / "default.yaml").read_text()
# The default policy, but unknown models get pixels under auto when the route accepts them.
TRUSTING = (
    DEFAULT.replace(
        "    when: {mode: auto, catalog: [no_vision, unknown], aux: unset, "
        "path: [accepts, unverified]}\n",
        "    when: {mode: auto, catalog: no_vision, aux: unset, path: [accepts, unverified]}\n",
    )
    .replace(
        "    when: {mode: auto, catalog: vision, aux: unset, path: accepts}\n",
        "    when: {mode: auto, catalog: [vision, unknown], aux: unset, path: accepts}\n",
    )
    .replace(
        "    when: {mode: auto, catalog: [no_vision, unknown]}\n    expect: text\n",
        "    when: {mode: auto, catalog: no_vision}\n    expect: text\n",
    )
)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(DEFAULT)
    new.write_text(TRUSTING)
    return old, new


def test_a_lane_change_names_the_cell_and_both_rules(files: tuple[Path, Path]) -> None:
    diff = diff_sources(str(files[0]), str(files[1]))
    [change] = diff.lane_changes
    assert change.cell == ("auto", "unknown", "unset", "accepts")
    assert (change.old.lane, change.old.rule) == ("text", "auto-model-not-known-to-see")
    assert (change.new.lane, change.new.rule) == ("native", "auto-vision-model")
    assert diff.verdict == "more permissive"
    assert diff.summary().startswith("1 cell(s) change lane: 1 become native, 0 become text")


def test_cli_exit_one_on_lane_change_and_json(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diff", str(files[0]), str(files[1]), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["became_native"] == 1 and document["became_text"] == 0
    assert document["lane_changes"] == [
        {
            "cell": "mode=auto,catalog=unknown,aux=unset,path=accepts",
            "old": {"lane": "text", "rule": "auto-model-not-known-to-see"},
            "new": {"lane": "native", "rule": "auto-vision-model"},
        }
    ]
    assert main(["diff", str(files[1]), str(files[0])]) == 1
    out = capsys.readouterr().out
    assert "mode=auto,catalog=unknown,aux=unset,path=accepts: native -> text" in out
    assert "0 become native, 1 become text (less permissive)" in out.splitlines()[-1]


def test_same_lanes_exit_zero_and_report_rule_and_setting_changes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["diff", "default", "examples/describe-mcp"]) == 0
    out = capsys.readouterr().out
    assert "execution.text.mcp: reference -> describe" in out
    assert "no cell changes lane" in out
    assert main(["diff", "default", "examples/trust-unknown-aliases"]) == 1
    assert "same lane, other rule (4):" in capsys.readouterr().out


def test_unreadable_and_invalid_sources(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path / "missing.yaml"), "default"]) == 2
    assert "missing.yaml`: no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text(DEFAULT.replace("lane: native", "lane: nativ", 1))
    assert main(["diff", "default", str(broken)]) == 3
    assert "unknown lane `nativ`" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_revisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    policy = tmp_path / "policies" / "p.yaml"
    policy.parent.mkdir()
    policy.write_text(DEFAULT)
    git("add", ".")
    git("commit", "-q", "-m", "one")
    policy.write_text(TRUSTING)
    git("commit", "-q", "-am", "two")
    monkeypatch.chdir(tmp_path)
    assert read_source("HEAD~1:policies/p.yaml")[0] == DEFAULT
    assert main(["diff", "HEAD~1:policies/p.yaml", "HEAD:policies/p.yaml"]) == 1
    assert "1 become native" in capsys.readouterr().out
    assert main(["diff", "HEAD:policies/p.yaml", "policies/p.yaml"]) == 0
    with pytest.raises(SourceError, match=re.escape("git cannot show `HEAD~5:policies/p.yaml`")):
        read_source("HEAD~5:policies/p.yaml")
    assert main(["diff", "HEAD:policies/nope.yaml", "policies/p.yaml"]) == 2


def test_missing_git_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(SourceError, match="git is not installed"):
        read_source("HEAD:policies/default.yaml")
