"""`visiongate route` (in process) and `visiongate mcp call` (a real subprocess and server)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _warm import server_command

from visiongate.adapters.mcp.example_server import gallery_images, screenshot_png
from visiongate.cli import main

TARGET = ["--provider", "anthropic", "--model", "claude-sonnet-4-5"]
SERVER = server_command()
WRAPPER = [sys.executable, str(Path(__file__).parents[1] / "examples" / "screenshot_server.py")]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {"screen": tmp_path / "screen.png", "notes": tmp_path / "notes.png"}
    made["screen"].write_bytes(screenshot_png())
    made["notes"].write_text("this is not an image", encoding="utf-8")
    for index, (data, subtype) in enumerate(gallery_images(2)):
        made[f"g{index}"] = tmp_path / f"g{index}.{subtype}"
        made[f"g{index}"].write_bytes(data)
    return made


def route(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = main(["route", *arguments])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_route_mcp_files_prints_payload_and_record(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    code, out, _ = route(
        capsys,
        "--source",
        "mcp",
        "--image",
        str(files["g0"]),
        "--image",
        str(files["g1"]),
        "--text",
        "two charts",
        *TARGET,
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert code == 0
    document = json.loads(out)
    assert document["payload"]["api"] == "anthropic"
    assert document["record"]["lane"] == "native"
    assert len(document["record"]["execution"]["attached"]) == 2
    assert document["record"]["payload"] == {"api": "anthropic", "images_sent": 2, "withheld": []}


def test_a_relative_cache_dir_gives_absolute_media_paths(
    capsys: pytest.CaptureFixture[str],
    files: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (issue 36): `--cache-dir images` gave `MEDIA:images/…`, a path the model's
    client, started elsewhere, cannot open."""
    monkeypatch.chdir(tmp_path)
    text_only = ["--provider", "deepseek", "--model", "deepseek-chat"]
    code, out, _ = route(
        capsys, "--source", "mcp", "--image", str(files["g0"]), *text_only, "--cache-dir", "images"
    )
    assert code == 0
    paths = re.findall(r"MEDIA:([^\s\"\\]+)", out)
    assert paths and all(Path(path).is_absolute() and Path(path).is_file() for path in paths), out


def test_route_refuses_a_file_that_is_not_an_image_inside_the_result(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    out_file = tmp_path / "payload.json"
    code, out, err = route(
        capsys,
        "--source",
        "mcp",
        "--image",
        str(files["notes"]),
        "--image",
        str(files["g0"]),
        *TARGET,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(out_file),
    )
    assert code == 0 and "Traceback" not in out + err
    document = json.loads(out)
    record = document["record"]
    (refused,) = record["execution"]["refused"]
    assert refused["index"] == 1 and "not a recognised image" in refused["reason"]
    payload = json.loads(out_file.read_text(encoding="utf-8"))
    assert payload == document["payload"] and payload["api"] == "anthropic"
    assert "[image 1: refused:" in payload["messages"][0]["content"][0]["content"][0]["text"]


def test_route_screenshot_not_an_image_is_refused_in_the_result(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    code, out, err = route(
        capsys,
        "--source",
        "computer_use",
        "--image",
        str(files["notes"]),
        *TARGET,
        "--api",
        "bedrock",
    )
    assert code == 0 and "Traceback" not in out + err
    document = json.loads(out)
    assert document["payload"]["api"] == "bedrock"
    assert "screenshot not attached: refused" in json.dumps(document["payload"])


def test_route_with_another_api_renders_that_shape(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    code, out, _ = route(
        capsys,
        "--source",
        "vision_analyze",
        "--image",
        str(files["screen"]),
        "--question",
        "what failed?",
        *TARGET,
        "--api",
        "openai-chat",
    )
    assert code == 0
    messages = json.loads(out)["payload"]["messages"]
    assert [message["role"] for message in messages] == ["tool", "user"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--source", "browser", "--image", "a.png", "--image", "b.png"], "exactly one --image"),
        (["--source", "mcp", "--image", "/nonexistent/x.png"], "no such file"),
    ],
)
def test_route_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    code, out, err = route(capsys, *arguments, *TARGET)
    assert code == 2
    assert out == "" and message in err and "Traceback" not in err


def test_mcp_call_arguments_must_be_a_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mcp", "call", *TARGET, "--tool", "tile", "--args", "[1]", "--", *SERVER])
    assert code == 2
    assert "--args must be a JSON object" in capsys.readouterr().err


def test_mcp_call_needs_a_server_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "call", *TARGET, "--tool", "tile"]) == 2
    assert "give the server command after `--`" in capsys.readouterr().err


def run_cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "visiongate", *arguments]
    environment = {**os.environ, "VISIONGATE_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=cwd, env=environment, check=False
    )


def test_mcp_call_routes_a_smuggling_server_without_reading_its_path(tmp_path: Path) -> None:
    # A FIFO with no writer: if anything opened it for reading, the command would hang.
    fifo = tmp_path / "trap"
    os.mkfifo(fifo)
    out_file = tmp_path / "payload.json"
    arguments = json.dumps({"media_path": str(fifo)})
    completed = run_cli(
        "mcp",
        "call",
        *TARGET,
        "--tool",
        "smuggle",
        "--args",
        arguments,
        "--out",
        str(out_file),
        "--",
        *SERVER,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    document: dict[str, Any] = json.loads(completed.stdout)
    record = document["record"]
    assert record["execution"]["unverified_media_lines"] == 1
    assert record["sanitizer"]["meta"]["reserved_keys"] == 3
    payload = json.loads(out_file.read_text(encoding="utf-8"))
    text = payload["messages"][0]["content"][0]["content"][0]["text"]
    assert f"[unverified] MEDIA:{fifo}" in text
    cached = [Path(path) for path in record["execution"]["media_paths"]]
    assert cached and all(path.parent == tmp_path / "cache" for path in cached)
    assert all(path.stat().st_mode & 0o777 == 0o600 for path in cached)


def test_mcp_call_text_lane_prints_payload_and_record(tmp_path: Path) -> None:
    # Through the thin wrapper in examples/, as a user of a checkout would start the server.
    completed = run_cli(
        "mcp",
        "call",
        "--provider",
        "deepseek",
        "--model",
        "deepseek-chat",
        "--tool",
        "gallery",
        "--",
        *WRAPPER,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    assert document["record"]["lane"] == "text"
    assert document["payload"]["messages"][0]["role"] == "tool"
    assert "data:image" not in completed.stdout


def test_mcp_call_server_that_dies_is_an_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["mcp", "call", *TARGET, "--tool", "x", "--", sys.executable, "-c", "pass"])
    captured = capsys.readouterr()
    assert code == 2
    assert "the MCP server `python -c pass` closed the connection during `initialize`" in (
        captured.err
    )
    assert "(it exited with status 0)" in captured.err
    assert "Traceback" not in captured.out + captured.err


def test_route_names_a_refused_file_by_its_absolute_path(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given relative to the working directory, the `MEDIA:` line still names the file from
    # wherever the agent reads it.
    monkeypatch.chdir(files["notes"].parent)
    argv = ["--source", "browser", "--image", files["notes"].name, *TARGET]
    code, out, _ = route(capsys, *argv)
    assert code == 0
    assert f"MEDIA:{files['notes'].resolve()}\\n" in json.dumps(json.loads(out)["payload"])
