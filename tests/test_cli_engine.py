"""`visiongate decide` and `visiongate explain`: output, JSON records and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine._load import bundled_policy_text

ROOT = Path(__file__).parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_decide_from_provider_and_model_explains_every_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(
        capsys,
        "decide",
        "--provider",
        "openrouter",
        "--model",
        "deepseek/deepseek-v3.2",
        "--explain",
    )
    assert code == 0
    assert "lane:    text" in out and "rule:    auto-model-not-known-to-see" in out
    assert re.search(r"\n  auto-model-not-known-to-see +WINS -> text\n", out)
    assert "no match: path is `unverified`, rule wants refuses" in out
    assert "no match: catalog is `no_vision`, rule wants vision" in out


def test_decide_json_prints_the_decision_record(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(
        capsys, "decide", "--facts", "mode=auto,catalog=vision,aux=unset,path=accepts", "--json"
    )
    record = json.loads(out)
    assert code == 0
    assert (record["lane"], record["rule"], record["schema_version"]) == (
        "native",
        "auto-vision-model",
        1,
    )
    assert record["facts"] == {
        "mode": "auto",
        "catalog": "vision",
        "aux": "unset",
        "path": "accepts",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["decide"],
        ["decide", "--provider", "anthropic"],
        ["decide", "--facts", "mode=auto"],
        ["decide", "--facts", "mode=auto,catalog=vison,aux=unset,path=accepts"],
        ["decide", "--facts", "mode=auto", "--provider", "a", "--model", "b"],
    ],
)
def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert run(capsys, *argv)[0] == 2


def test_an_invalid_policy_exits_3_with_located_diagnostics(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text(
        "policy: p\nversion: '1'\ndescription: d\nhit_policy: first\ndefault: text\n"
        "rules:\n  - id: a\n    when: {path: no}\n    lane: native\n    reason: r\n"
    )
    code, _out, err = run(capsys, "explain", "--policy", str(policy))
    assert code == 3
    assert f"{policy}:8:18: error[yaml-implicit-boolean]" in err
    assert "quote it: `'no'`" in err


def test_explain_prints_all_54_cells(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "explain")
    rows = [line for line in out.splitlines() if line.startswith(("auto ", "native ", "text "))]
    assert code == 0 and len(rows) == 54
    assert out.strip().endswith("14 cell(s) native, 40 text")
    document = json.loads(run(capsys, "explain", "--json")[1])
    table = document["cells"]
    assert len(table) == 54 and {row["lane"] for row in table} == {"native", "text"}
    assert document["policy"]["name"] == "default" and len(document["policy"]["sha256"]) == 64


def test_explain_a_bundled_example_policy_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run(capsys, "explain", "--policy", "examples/never-pixels")
    assert code == 0 and "0 cell(s) native, 54 text" in out


BAD_CONFIG = (
    "agent:\n  image_input_mode: txet\n"
    "auxiliary:\n  vison: {provider: openrouter}\n"
    "vision:\n  embed_taget_bytes: 100000\n"
)


def test_decide_with_an_invalid_mode_fails_closed_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(BAD_CONFIG)
    code, out, err = run(
        capsys,
        "decide",
        "--config",
        str(config),
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
    )
    assert code == 3
    assert "lane:    text" in out
    assert "invalid value `txet` (did you mean `text`?): failing closed" in out
    # Warnings go to standard error, where a person looks while stdout is piped.
    # `auxiliary.vision` routes images: its near miss is an error now (issue 35), not ignored.
    assert "unknown key `vison` under `auxiliary` looks like `vision`, which routes" in err
    assert "error[invalid-mode]: `txet` is not an image input mode" in err
    code, out, _err = run(
        capsys,
        "decide",
        "--config",
        str(config),
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--json",
    )
    record = json.loads(out)
    assert code == 3 and record["lane"] == "text" and record["facts"]["mode"] == "text"
    assert any("did you mean `embed_target_bytes`?" in w for w in record["warnings"])


def test_lint_config_reports_the_error_and_the_near_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(BAD_CONFIG)
    code, out, _err = run(capsys, "lint", "--config", str(config))
    assert code == 3
    assert ":2:21: error[invalid-mode]: `txet` is not an image input mode" in out
    assert ":4:3: error[misspelt-routing-key]: unknown key `vison`" in out
    assert ":6:3: warning[unknown-config-key]: unknown key `embed_taget_bytes`" in out
    config.write_text("agent:\n  image_input_mode: text\nvision: {embed_taget_bytes: 1}\n")
    assert run(capsys, "lint", "--config", str(config))[0] == 0
    assert run(capsys, "lint", "--strict", "--config", str(config))[0] == 1
    config.write_text("agent: [native\n")
    code, out, _err = run(capsys, "lint", "--config", str(config), "--format", "json")
    assert code == 3 and "yaml-syntax" in out
    code, out, _err = run(capsys, "lint", "--config", str(config), str(ROOT / "policies"))
    assert code == 3 and "default.yaml" not in out  # the shipped policies are clean


def test_decide_names_a_bundled_policy_as_bundled_never_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A bundled policy has no path (it is recorded as bundled): the text said `None`."""
    assert main(["decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("policy:"))
    assert "bundled default, visiongate " in line and "None" not in line
    mine = tmp_path / "mine.yaml"
    mine.write_text(bundled_policy_text("default").replace('"2.0.0"', '"2.0.1"'))
    facts = "mode=text catalog=vision aux=unset path=accepts"
    assert main(["decide", "--policy", str(mine), "--facts", facts]) == 0
    assert str(mine.absolute()) in capsys.readouterr().out
