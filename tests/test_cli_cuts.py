"""Small cuts of the command line a newcomer meets (issue 28), one regression test each."""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_helpers import POLICIES, TARGET, run

from visiongate.cli import COMMANDS, build_parser


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


@pytest.fixture
def listener() -> Iterator[tuple[str, list[int]]]:
    """A loopback port that counts the connections made to it (and closes each)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    connections: list[int] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            connections.append(1)
            client.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1", connections
    stop.set()
    thread.join()
    server.close()


def test_probe_with_no_key_stops_before_any_request(
    listener: tuple[str, list[int]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, connections = listener
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = ["probe", "--provider", "openai", "--model", "gpt-4o", "--base-url", url]
    code, out, err = run(capsys, *argv, "--timeout", "5")
    assert (code, out, connections) == (2, "", [])
    assert "no API key for `openai`: `OPENAI_API_KEY` is not set" in err and "--no-key" in err
    # Said on purpose, a keyless endpoint is probed (here it answers nothing: inconclusive).
    code, out, _err = run(capsys, *argv, "--timeout", "5", "--no-key")
    assert code == 1 and "inconclusive" in out and connections


def test_print_config_names_the_server_program_and_its_files_absolutely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A desktop app starts the server from its own folder, with its own PATH: `python
    # server.py` as typed would not run there.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "server.py").write_text("")
    argv = ["proxy", "--print-config", "json", *TARGET, "--name", "mine", "--"]
    code, out, err = run(capsys, *argv, "python3", "server.py", "--port", "3", "-m", "x.y")
    args = json.loads(out)["mcpServers"]["mine"]["args"]
    server = args[args.index("--") + 1 :]
    assert (code, err) == (0, "")
    assert server == [
        shutil.which("python3"),
        str(tmp_path / "server.py"),
        "--port",
        "3",
        "-m",
        "x.y",
    ]
    assert Path(server[0]).is_absolute()
    code, out, err = run(capsys, *argv, "nosuchprogram", "arg")
    args = json.loads(out)["mcpServers"]["mine"]["args"]
    assert code == 0 and args[args.index("--") + 1 :] == ["nosuchprogram", "arg"]
    assert err.startswith("visiongate proxy: warning: `nosuchprogram` is not found on this PATH")


def _parsers(
    parser: argparse.ArgumentParser, name: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {option: action for action in parser._actions for option in action.option_strings}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_with_a_json_format_takes_json(command: str) -> None:
    top = build_parser(only=command)
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    for name, parser in _parsers(sub.choices[command], command):
        options = _options(parser)
        formats = options.get("--format")
        if formats is not None and "json" in (formats.choices or ()):
            assert "--json" in options, f"`{name} --format json` exists, `{name} --json` does not"


def test_lint_json_is_lint_format_json(capsys: pytest.CaptureFixture[str]) -> None:
    policy = str(POLICIES / "examples" / "never-pixels.yaml")
    assert run(capsys, "lint", "--json", policy) == run(capsys, "lint", "--format", "json", policy)
    code, out, err = run(capsys, "lint", "--json", "--format", "sarif", policy)
    assert (code, out) == (2, "") and "`--json` and `--format sarif` ask for two formats" in err
