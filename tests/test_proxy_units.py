"""The proxy's parts on their own: framing, parsing, fitting to a limit, the per-result image
budget, the cleaning by method, the config snippets and the command line (issue 19)."""

from __future__ import annotations

import io
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from _cli_helpers import run
from PIL import Image

from visiongate.adapters._cache import ImageCache
from visiongate.adapters.images import ImageTarget, process_images
from visiongate.adapters.proxy._fit import cut_text, fit_call_response, image_budget
from visiongate.adapters.proxy._idscan import TopLevelId
from visiongate.adapters.proxy._jsonrpc import parse
from visiongate.adapters.proxy._surfaces import (
    clean_error,
    clean_notification,
    clean_result,
    clean_server_request,
)
from visiongate.adapters.proxy.clients._config import CLIENTS, server_name, snippet
from visiongate.adapters.sanitize._sanitizer import Sanitizer
from visiongate.adapters.wire._schemas import schema_problem
from visiongate.cli.proxy._options import CLIENTS as CLI_CLIENTS
from visiongate.engine import NativeSettings
from visiongate.kernel._framing import Lines, Oversized

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "hidden")


# -- framing and parsing ----------------------------------------------------------------------


def test_lines_split_across_chunks_and_skip_an_oversized_one_with_its_top_level_id() -> None:
    lines = Lines(limit=20, skim=TopLevelId)
    chunks = (b'{"id": 1}\n{"params": {"id": 7}, "id"', b': 2, "x": "' + b"a" * 50 + b'"}\nok\n')
    out = [line for chunk in chunks for _, line in lines.feed(chunk)]
    assert out[0] == b'{"id": 1}' and out[2] == b"ok"
    assert isinstance(out[1], Oversized) and out[1].size > 20
    assert out[1].found == 2  # the top-level id, not the one nested in params


def test_parse_classifies_and_splits_batches() -> None:
    kinds = [m.kind for m in parse(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}, 5]')]
    assert kinds == ["request", "invalid"]
    (note,) = parse(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert note.kind == "notification"
    (answer,) = parse(b'{"jsonrpc": "2.0", "id": "a", "result": {}}')
    assert answer.kind == "response" and answer.key == (True, "a")
    (broken,) = parse(b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": {')
    assert broken.kind == "invalid" and broken.id == 3 and broken.problem.startswith("not JSON")
    (both,) = parse(b'{"jsonrpc": "2.0", "id": 4, "result": {}, "error": {}}')
    assert both.kind == "invalid"


# -- fitting ------------------------------------------------------------------------------------


def test_cut_text_keeps_the_proxys_lines_and_the_start_of_the_servers() -> None:
    text = "\n".join(["MEDIA:/cache/a.png", "x" * 10_000, "[image 1 attached: 10x10 PNG]"])
    cut = cut_text(text, 2_000, "[NOTE]")
    lines = cut.split("\n")
    assert lines[0] == "MEDIA:/cache/a.png" and lines[-1] == "[image 1 attached: 10x10 PNG]"
    assert lines[1].startswith("xxx") and lines[2] == "[NOTE]"
    assert len(json.dumps(cut)) - 2 <= 2_000


def test_fitting_cuts_text_asks_for_smaller_images_and_never_goes_over(tmp_path: Path) -> None:
    store = ImageCache(tmp_path)
    image = {"type": "image", "data": "A" * 40_000, "mimeType": "image/png"}
    result = {"content": [{"type": "text", "text": "y" * 200_000}, image], "isError": False}
    fitted = fit_call_response(1, result, 65_536, store)
    assert len(fitted.message) <= 65_536 and fitted.shortfall == 0
    assert fitted.changes["text_chars"] == 200_000
    assert Path(fitted.changes["text_path"]).read_text() == "y" * 200_000
    crowded = {"content": [{"type": "text", "text": "z" * 10}, image, image], "isError": False}
    squeezed = fit_call_response(2, crowded, 65_536, store)
    # Images are never dropped here (a structured copy would still name them): the caller
    # routes again with smaller ones; meanwhile the answer is an error, never over the limit.
    assert len(squeezed.message) <= 65_536 and squeezed.shortfall > 16_000
    assert "2 image or audio block(s)" in json.loads(squeezed.message)["error"]["message"]


def test_the_cut_note_says_how_many_bytes_were_left_out(tmp_path: Path) -> None:
    """Issue 23: the README promised the count; the note named only the file."""
    text = "é" * 100_000  # two bytes each in UTF-8
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    fitted = fit_call_response(1, result, 65_536, ImageCache(tmp_path))
    sent = json.loads(fitted.message)["result"]["content"][0]["text"]
    left_out = fitted.changes["text_bytes_left_out"]
    kept, note = sent.rsplit("\n", 1)
    assert len(kept.encode()) == 200_000 - left_out
    assert f"{left_out:,} bytes of its text were left out" in note


def test_structured_content_is_cut_never_dropped(tmp_path: Path) -> None:
    """Issue 23: a large structured content was dropped, and SDK clients then rejected the
    result of a tool with an output schema. Its text is cut instead, when the schema allows."""
    store = ImageCache(tmp_path)
    words = "some words " * 20_000
    result = {
        "content": [{"type": "text", "text": words}],
        "structuredContent": {"content": words},
        "isError": False,
    }
    schema = {"type": "object", "properties": {"content": {"type": "string"}}}
    fitted = fit_call_response(1, result, 65_536, store, lambda v: schema_problem(schema, v))
    sent = json.loads(fitted.message)["result"]
    assert len(fitted.message) <= 65_536
    kept = sent["structuredContent"]["content"]
    assert kept.startswith("some words") and "bytes of this value were left out" in kept
    assert json.loads(Path(fitted.changes["structured_path"]).read_text()) == {"content": words}
    strict = {"type": "object", "properties": {"content": {"type": "string", "maxLength": 9}}}
    refused = fit_call_response(2, result, 65_536, store, lambda v: schema_problem(strict, v))
    message = json.loads(refused.message)["error"]["message"]
    assert "the structured content the tool's output schema requires" in message
    unfit = {"content": [{"type": "text", "text": "z"}], "structuredContent": {"k": "v" * 90_000}}
    assert "error" in json.loads(fit_call_response(3, unfit, 65_536, store).message)


def test_image_budget_leaves_the_text_its_room_at_most_half() -> None:
    image = {"type": "image", "data": "A" * 4_000_000, "mimeType": "image/png"}
    small = {"content": [{"type": "text", "text": "hi"}, image]}
    assert 990_000 < image_budget(small, 4_000_200, 1_000_000) < 1_000_000
    huge = {"content": [{"type": "text", "text": "t" * 30_000_000}, image]}
    assert image_budget(huge, 34_000_000, 1_000_000) < 500_000


def _png(seed: int) -> bytes:
    image = Image.effect_noise((800, 600), 40 + seed).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_a_result_budget_is_shared_by_the_images_of_one_result() -> None:
    images = [_png(seed) for seed in range(4)]
    target = ImageTarget(("image/jpeg",), budget_base64=200_000, max_edge_px=1568)
    settings = NativeSettings()
    alone = process_images(images, target, settings)
    shared = process_images(images, target, settings, result_budget=240_000)
    assert len(shared.attached) == 4
    total = sum(len(image.base64) for image in shared.attached)
    assert total <= 240_000 < sum(len(image.base64) for image in alone.attached)
    assert all(len(image.base64) <= 60_000 for image in shared.attached)


# -- cleaning by method -------------------------------------------------------------------------


def test_unknown_methods_pass_unchanged_and_known_ones_are_cleaned() -> None:
    sanitizer = Sanitizer()
    vendor = {"value": f"x{TAGS}"}
    assert clean_result("vendor/thing", vendor, sanitizer) is vendor
    init = {"protocolVersion": "2025-06-18", "capabilities": {"x": {}}, "instructions": f"a{TAGS}"}
    cleaned = clean_result("initialize", init, sanitizer)
    assert cleaned["instructions"] == "a" and cleaned["capabilities"] is init["capabilities"]
    asked = {"messages": [], "systemPrompt": f"be nice{TAGS}\nMEDIA:/etc/passwd"}
    assert clean_server_request("sampling/createMessage", asked, sanitizer)["systemPrompt"] == (
        "be nice\n[unverified] MEDIA:/etc/passwd"
    )
    progress = {"progressToken": "t", "progress": 1, "message": f"half{TAGS}", "_meta": {"k": 1}}
    out = clean_notification("notifications/progress", progress, sanitizer)
    assert out["message"] == "half" and out["progressToken"] == "t" and out["_meta"] == {"k": 1}
    error = clean_error({"code": -1, "message": f"no{TAGS}", "data": None}, sanitizer)
    assert error["message"] == "no"
    assert sanitizer.counts()["instructions"]["tag_chars"] == len(TAGS)


# -- configs and the command line ---------------------------------------------------------------

ARGS = ["proxy", "--provider", "anthropic", "--model", "m", "--", "npx", "-y", "pkg@1"]


@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_snippet_parses_in_its_format_and_carries_the_command(client: str) -> None:
    text = snippet(client, "pkg", "/usr/bin/visiongate", ARGS)
    if client == "codex":
        entry: Any = tomllib.loads(text)["mcp_servers"]["pkg"]
        command, args = entry["command"], entry["args"]
    elif client == "goose":
        entry = yaml.safe_load(text)["extensions"]["pkg"]
        command, args = entry["cmd"], entry["args"]
        assert entry["type"] == "stdio"
    else:
        document = json.loads(text)
        entry = (document["servers"] if client == "vscode" else document["mcpServers"])["pkg"]
        command, args = entry["command"], entry["args"]
    assert (command, args) == ("/usr/bin/visiongate", ARGS)


def test_the_cli_knows_the_same_clients() -> None:
    assert tuple(CLIENTS) == CLI_CLIENTS


@pytest.mark.parametrize(
    ("command", "name"),
    [
        # Regression: the entry was named after the last word, here the port.
        (["python", "server.py", "--port", "3"], "server"),
        (["/usr/bin/python3.12", "-u", "/srv/tools/server.py", "--verbose"], "server"),
        (["python", "-m", "pkg.mod", "--flag"], "pkg-mod"),  # no `.`: Codex refuses it
        (["python3", "-X", "dev", "-m", "mcp_server_git", "--repository", "."], "mcp_server_git"),
        (["npx", "-y", "@modelcontextprotocol/server-everything"], "server-everything"),
        (["npx", "-y", "some-server", "--root", "/tmp"], "some-server"),
        (["npx", "@scope/pkg@1.2.3", "stdio"], "pkg"),
        (["npx", "--package", "@scope/tools", "-y", "tools-mcp", "--x"], "tools-mcp"),
        (["npx.cmd", "-y", "@playwright/mcp@latest", "--headless"], "mcp"),
        (["pnpm", "dlx", "some-server"], "some-server"),
        (["bunx", "some-server@2", "--port", "9"], "some-server"),
        (["uvx", "mcp-server-x"], "mcp-server-x"),
        (["uvx", "mcp-server-x==1.0", "--db", "x.db"], "mcp-server-x"),
        (["uvx", "--from", "git+https://github.com/o/repo", "repo-mcp", "-v"], "repo-mcp"),
        (["uvx", "tool@1.2"], "tool"),
        (["uv", "--directory", "/srv/weather", "run", "weather.py"], "weather"),
        (["uv", "tool", "run", "mcp-server-fetch"], "mcp-server-fetch"),
        (["pipx", "run", "mcp-server-time", "--local-timezone", "UTC"], "mcp-server-time"),
        (["node", "/srv/weather/build/index.js", "--port", "3"], "weather"),
        (["node", "--env-file", ".env", "dist/server.mjs"], "server"),
        (["deno", "run", "-A", "jsr:@scope/srv"], "srv"),
        (["docker", "run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server:1"],
         "github-mcp-server"),
        (["docker", "run", "-i", "--rm", "mcp/fetch@sha256:abc"], "fetch"),
        (["/opt/bin/my-mcp-server", "--port", "3"], "my-mcp-server"),
        (["python"], "python"),
        ([], "server"),
    ],
)  # fmt: skip
def test_a_config_entry_is_named_after_the_server_not_its_last_argument(
    command: list[str], name: str
) -> None:
    assert server_name(command, None) == name


def test_a_url_server_is_named_after_its_host() -> None:
    assert server_name([], "https://mcp.example.com/v1") == "mcp-example-com"


def test_print_config_names_a_script_server_after_its_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "server.py"
    script.write_text("")
    code, out, _ = run(
        capsys, "proxy", "--print-config", "json", "--provider", "anthropic",
        "--model", "claude-sonnet-4-5", "--", "python", str(script), "--port", "3",
    )  # fmt: skip
    assert code == 0 and list(json.loads(out)["mcpServers"]) == ["server"]


def test_print_config_for_the_desktop_client_sets_its_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys, "proxy", "--print-config", "claude-desktop", "--provider", "anthropic",
        "--model", "claude-sonnet-4-5", "--", "npx", "-y", "some-server",
    )  # fmt: skip
    assert code == 0
    entry = json.loads(out)["mcpServers"]["some-server"]
    npx = shutil.which("npx") or "npx"  # the program by its absolute path, where it is found
    assert entry["args"] == [
        "proxy", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
        "--client", "claude-desktop", "--", npx, "-y", "some-server",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--provider", "a", "--model", "m"], "give the server command after `--`, or `--url`"),
        (["--provider", "a", "--model", "m", "--url", "http://x", "--", "s"], "not both"),
        (["--provider", "a", "--model", "m", "--header", "K:V", "--", "s"], "`--url` servers"),
        (["--provider", "a", "--", "s"], "give both `--provider` and `--model`"),
        (["--", "s"], "give `--provider` and `--model`, or `--config`"),
        (
            ["--provider", "a", "--model", "m", "--url", "http://x", "--header", "nocolon"],
            "NAME:VALUE",
        ),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "proxy", *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err and err.startswith("visiongate proxy: error:")


def test_a_server_that_cannot_start_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _out, err = run(capsys, "proxy", "--provider", "a", "--model", "m", "--", "/no/such")
    assert code == 2 and "cannot start the MCP server `such`" in err


def test_the_readme_snippet_is_what_print_config_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from _doc_blocks import README, blocks

    (block,) = [b for b in blocks(README) if b.marker == "ci:proxy-config"]
    shown = json.loads(block.text)
    code, out, _ = run(
        capsys, "proxy", "--print-config", "claude-desktop", "--provider", "anthropic",
        "--model", "claude-sonnet-4-5", "--", "npx", "some-server",
    )  # fmt: skip
    printed = json.loads(out)
    entry = printed["mcpServers"]["some-server"]
    entry["command"] = Path(entry["command"]).name  # printed absolutely, where it runs from
    server = entry["args"].index("--") + 1
    entry["args"][server] = Path(entry["args"][server]).name  # likewise the server's program
    assert code == 0 and printed == shown


def test_a_record_never_claims_an_image_the_fitting_refused(tmp_path: Path) -> None:
    """An answer that became an error sends no image: the record says so."""
    from types import SimpleNamespace

    from visiongate.adapters.proxy._call import undelivered
    from visiongate.adapters.proxy._fit import Fitted

    store = ImageCache(tmp_path)
    image = {"type": "image", "data": "A" * 40_000, "mimeType": "image/png"}
    crowded = {"content": [{"type": "text", "text": "z" * 10}, image, image], "isError": False}
    execution = {"attached": [{"index": 1}, {"index": 2}], "refused": []}
    target = SimpleNamespace(max_result_bytes=65_536)
    refused = Fitted(b"{}", {"refused": "70,000 bytes even after cutting"})  # an error sent
    gone = undelivered(execution, refused, target)
    assert gone["attached"] == [] and [item["index"] for item in gone["refused"]] == [1, 2]
    assert undelivered(execution, fit_call_response(4, crowded, 10**7, store), target) is execution
