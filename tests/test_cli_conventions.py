"""One table of exit codes, usage errors on stderr, named input files, did-you-mean: the
conventions every command follows, each bad input of issue 14 as a regression test."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli_helpers import FACTS, POLICIES, ROOT, TARGET, json_output, run
from _warm import server_command

from visiongate.adapters.mcp.example_server import screenshot_png
from visiongate.cli import COMMANDS, EXIT_CODES


def test_help_shows_the_exit_code_table_then_every_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(capsys, "--help")
    assert code == 0
    assert out.index("exit codes (every command):") > max(out.index(name) for name in COMMANDS)
    for line in (
        "  0  ok",
        "  1  findings",
        "  2  usage or input error",
        "  3  a policy",
        "  4  `mcp call`",
    ):
        assert line in out
    for name in COMMANDS:
        code, out, _err = run(capsys, name, "--help")
        assert code == 0 and EXIT_CODES in out, name


def test_the_readme_has_the_same_exit_code_table() -> None:
    readme = (ROOT / "README.md").read_text()
    rows = (
        ("0", "ok"),
        ("1", "findings"),
        ("2", "usage or input error"),
        ("3", "a policy or configuration that fails to load"),
    )
    for code, meaning in rows:
        assert re.search(rf"\| `{code}` \| {meaning}", readme), code


def test_no_command_and_an_unknown_command_are_usage_errors_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys)
    assert (code, out) == (2, "") and "usage: visiongate" in err
    code, out, err = run(capsys, "lnt", "policies")
    assert (code, out) == (2, "")
    assert err.strip() == "visiongate: error: unknown command `lnt`: did you mean `lint`?"


USAGE_ERRORS = {
    "decide with no arguments": ["decide"],
    "decide --provider without --model": ["decide", "--provider", "x"],
    "decide with both --facts and --provider": ["decide", "--facts", FACTS, "--provider", "a"],
    "registry with no action": ["registry"],
    "routes with no action": ["routes"],
    "an unknown flag": ["explain", "--polcy", "default"],
    "rule with an unknown code": ["rule", "gapp"],
    "proxy --url that is not http(s)": ["proxy", *TARGET, "--url", "ftp://example.com/mcp"],
    "test --run with a bad pattern": ["test", "--run", "(", str(POLICIES)],
    "lint --severity with an unknown code": ["lint", str(POLICIES), "--severity", "gapp=error"],
}


@pytest.mark.parametrize("argv", USAGE_ERRORS.values(), ids=USAGE_ERRORS)
def test_usage_errors_go_to_stderr_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and "error" in err


ABBREVIATIONS = {
    # `--mode` is a prefix of `--model`: argparse would have read it as a new model id.
    "decide --mode (not an option, a prefix of --model)": ["decide", *TARGET, "--mode", "text"],
    "lint --form": ["lint", str(POLICIES), "--form", "json"],
    "explain --pol": ["explain", "--pol", "never-pixels"],
    "mcp call --tim": ["mcp", "call", *TARGET, "--tool", "tile", "--tim", "1", "--", "true"],
    "registry show --mod": ["registry", "show", "anthropic", "--mod", "claude-sonnet-4-5"],
}


@pytest.mark.parametrize("argv", ABBREVIATIONS.values(), ids=ABBREVIATIONS)
def test_an_abbreviated_option_is_a_usage_error_not_a_guess(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "error: unknown option `--" in err


MISSPELT_FLAGS = {
    # argv -> the hint on stderr: the (sub)command's options, not the top-level usage.
    "lint --stirct": (["lint", "--stirct"], "lint", "did you mean `--strict`?"),
    "explain --polcy": (["explain", "--polcy", "x"], "explain", "did you mean `--policy`?"),
    "routes list --jsn": (["routes", "list", "--jsn"], "routes list", "did you mean `--json`?"),
    "an option with its value": (["lint", "--formt=json"], "lint", "did you mean `--format`?"),
    "nothing close": (["version", "--zzz"], "version", "see `visiongate version --help`"),
    # Regression: the server command took the rest of the line, so argparse reported the
    # required flags it then missed (`--tool`, `--provider`), not the misspelt one.
    "mcp call --tol": (
        ["mcp", "call", "--tol", "x", "--", "server"],
        "mcp call",
        "did you mean `--tool`?",
    ),
    "mcp call --providr": (
        ["mcp", "call", "--providr", "p", "--tool", "x", "--model", "m", "--", "server"],
        "mcp call",
        "did you mean `--provider`?",
    ),
    "mcp call --timout, no --": (
        ["mcp", "call", "--timout", "3", "python", "server.py"],
        "mcp call",
        "did you mean `--timeout`?",
    ),
    "proxy --modl": (["proxy", "--modl", "m", "--", "server"], "proxy", "did you mean `--model`?"),
    # Likewise a command with required flags: they were named instead of the misspelt one.
    "route --providr": (["route", "--providr", "a"], "route", "did you mean `--provider`?"),
}


@pytest.mark.parametrize(("argv", "label", "hint"), MISSPELT_FLAGS.values(), ids=MISSPELT_FLAGS)
def test_a_misspelt_flag_gets_a_did_you_mean_from_its_command(
    argv: list[str], label: str, hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    flag = next(word for word in argv if word.startswith("-")).split("=")[0]
    line = f"visiongate {label}: error: unknown option `{flag}`: {hint}\n"
    assert (code, out, err) == (2, "", line)


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "call", "--tool", "t", *TARGET, "--", "/no/such/server", "--its-own", "-x"],
        ["mcp", "call", "--tool", "t", *TARGET, "/no/such/server", "--its-own", "-x"],
    ],
)
def test_the_server_commands_own_flags_are_not_judged(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2 and "unknown option" not in err
    assert "cannot start the MCP server `server --its-own -x`" in err  # the flags reach it


def test_a_stray_word_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "version", "extra")
    assert code == 2
    hint = "see `visiongate version --help`"
    assert err == f"visiongate version: error: unexpected argument `extra`: {hint}\n"


def test_route_with_two_images_for_computer_use_is_a_usage_error_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "screen.png"
    image.write_bytes(screenshot_png())
    argv = ["--source", "computer_use", "--image", str(image), "--image", str(image), *TARGET]
    code, out, err = run(capsys, "route", *argv)
    assert (code, out) == (2, "")
    assert "`computer_use` takes exactly one --image, not 2" in err


def test_mcp_call_without_the_server_command_is_a_usage_error_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "mcp", "call", *TARGET, "--tool", "tile")
    assert (code, out) == (2, "") and "give the server command after `--`" in err


def test_test_of_an_empty_directory_is_a_usage_error_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "test", str(tmp_path))
    assert (code, out) == (2, "") and "no policy test files found under" in err


def test_mcp_call_of_a_tool_the_server_does_not_have_is_not_a_success(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["mcp", "call", *TARGET, "--tool", "nosuchtool", "--cache-dir", str(tmp_path)]
    code, out, err = run(capsys, *argv, "--", *server_command())
    assert code == 4  # its own meaning: not a usage error (2), not findings (1)
    assert json_output(out)["record"]["lane"] in ("native", "text")  # still routed and shown
    assert "`nosuchtool` answered with an error" in err


MISSING = "no-such-file.yaml"
MISSING_INPUTS = {
    "lint": (["lint", MISSING], "cannot read `no-such-file.yaml`: no such file or directory"),
    "test": (["test", "none.test.yaml"], "cannot read `none.test.yaml`: no such file"),
    "fmt": (["fmt", MISSING], "cannot read `no-such-file.yaml`: no such file"),
    "docs": (["docs", MISSING], "cannot read `no-such-file.yaml`: no such file"),
    "explain --policy": (["explain", "--policy", MISSING], "cannot read the policy `no-such"),
    "decide --config": (
        ["decide", "--config", MISSING, "--facts", FACTS],
        "cannot read the agent config `no-such-file.yaml`: no such file or directory",
    ),
    "decide --catalog": (
        ["decide", "--catalog", "none.json", *TARGET],
        "cannot read the model catalog `none.json`",
    ),
    "decide --registry": (
        ["decide", "--registry", MISSING, *TARGET],
        "cannot read the provider registry `no-such-file.yaml`",
    ),
    "lint --config": (["lint", "--config", MISSING], "cannot read the agent config"),
    "diff": (["diff", MISSING, "default"], "cannot read `no-such-file.yaml`: no such file"),
    "route --image": (
        ["route", "--source", "browser", "--image", "none.png", *TARGET],
        "cannot read the image `none.png`",
    ),
    "registry show --config": (
        ["registry", "show", "openrouter", "--config", MISSING],
        "cannot read the agent config",
    ),
}


@pytest.mark.parametrize("argv,message", MISSING_INPUTS.values(), ids=MISSING_INPUTS)
def test_a_missing_input_file_is_exit_2_naming_the_file_and_its_kind(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert message in err
    assert "<policy>" not in err and len(err.strip().splitlines()) == 1


def test_audit_of_a_missing_trace_is_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _out, err = run(capsys, "audit", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "malformed" not in err


def test_an_unreadable_catalog_names_its_file_not_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text("{not json")
    code, _out, err = run(capsys, "decide", "--catalog", str(catalog), *TARGET)
    assert code == 3
    assert err.startswith(f"{catalog}:1:2: error[catalog-json]")


def test_the_library_names_an_unreadable_config_file_and_its_kind(tmp_path: Path) -> None:
    from visiongate.engine import Gate, PolicyError

    with pytest.raises(PolicyError) as raised:
        Gate.load(config=tmp_path / "agent.yaml")
    assert str(raised.value).startswith(f"{tmp_path / 'agent.yaml'}: error[unreadable-file]")
    assert "cannot read the agent config" in str(raised.value)


@pytest.mark.parametrize(
    "argv,suggestion",
    [
        (["explain", "--policy", "defualt"], "did you mean `default`?"),
        (["decide", "--policy", "never-pixels", "--facts", FACTS], "`examples/never-pixels`"),
        (["diff", "default", "never-pixels"], "did you mean `examples/never-pixels`?"),
        (["diff", "default", "examples/strict-route"], "did you mean `examples/strict-routes`?"),
    ],
)
def test_a_bundled_policy_name_typo_gets_a_did_you_mean(
    argv: list[str], suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and suggestion in err


def test_decide_json_explain_prints_exactly_one_json_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run(capsys, "decide", "--facts", FACTS, "--json", "--explain")
    record = json.loads(out)  # raises if anything follows the document
    assert code == 0
    assert [row["status"] for row in record["explanation"]].count("wins") == 1


def test_decide_json_with_facts_keeps_provider_and_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = json_output(run(capsys, "decide", "--facts", FACTS, "--json")[1])
    assert record["provider"] is None and record["model"] is None


@pytest.mark.parametrize(
    "facts",
    [
        ["mode=auto catalog=vision aux=unset path=accepts"],
        ["mode=auto", "catalog=vision", "aux=unset", "path=accepts"],
        ["mode=auto,catalog=vision", "aux=unset,path=accepts"],
    ],
)
def test_facts_take_the_syntax_of_test_files(
    facts: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "decide", "--facts", *facts, "--json")
    assert code == 0 and json_output(out)["rule"] == "auto-vision-model"


@pytest.mark.parametrize(
    "facts,message",
    [
        (
            "mode=auto mode=text catalog=vision aux=unset path=accepts",
            "fact `mode` is given twice (`auto` and `text`)",
        ),
        (
            "mode=auto|text catalog=vision aux=unset path=accepts",
            "`mode=auto|text` gives several values; a decision takes one value per fact",
        ),
        ("mode=auto catalog=vison aux=unset path=accepts", "did you mean `vision`?"),
        ("mode=auto catalg=vision aux=unset path=accepts", "`catalg` is not a fact"),
        ("mode=auto", "missing fact(s): `catalog`, `aux`, `path`"),
        ("mode", "`mode` is not `fact=value`"),
    ],
)
def test_bad_facts_say_what_is_wrong(
    facts: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "decide", "--facts", facts)
    assert (code, out) == (2, "") and message in err


def test_decide_with_a_config_decides_for_its_main_model_like_proxy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("model:\n  provider: anthropic\n  default: claude-sonnet-4-5\n")
    code, out, err = run(capsys, "decide", "--config", str(config), "--json")
    record = json.loads(out)
    assert (code, err) == (0, "")
    assert (record["provider"], record["model"], record["lane"]) == (
        "anthropic",
        "claude-sonnet-4-5",
        "native",
    )
    # The command line still wins over the config's main model.
    code, out, _ = run(
        capsys, "decide", "--config", str(config), "--json", *TARGET[:2], "--model", "gpt-3.5-turbo"
    )
    assert code == 0 and json.loads(out)["model"] == "gpt-3.5-turbo"


def test_decide_with_a_config_that_names_no_model_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mode: auto\n")
    code, out, err = run(capsys, "decide", "--config", str(config))
    assert (code, out) == (2, "")
    assert "names no main model: give `--provider` and `--model`" in err


def test_proxy_with_a_config_that_names_no_model_is_the_same_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mode: auto\n")
    code, out, err = run(capsys, "proxy", "--config", str(config), "--", "true")
    assert (code, out) == (2, "")
    assert "names no main model: give `--provider` and `--model`" in err
