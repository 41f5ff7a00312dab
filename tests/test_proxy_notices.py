"""`visiongate proxy` says the operator's mistakes on stderr, once, at start (issue 35).

Regression: `--provider openruter`, `--model claude-sonet-4-5` and a config with a misspelt
key kept images out (or let them in) with nothing on stderr; the did-you-mean was only in a
trace nobody asked for. Each case runs the real proxy in front of the example server with no
client on its input: it starts the server, says what it must and ends the session.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _proxy_helpers import proxy_env
from _proxy_helpers import warm_proxy_argv as proxy_argv
from _warm import server_command


def proxy_stderr(home: Path, *options: str, target: tuple[str, ...]) -> str:
    argv = proxy_argv(server_command(), *options, target=target)
    done = subprocess.run(
        argv,
        cwd=home,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=proxy_env(home),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("target", "line"),
    [
        (
            ("--provider", "openruter", "--model", "anthropic/claude-sonnet-4.5"),
            "visiongate proxy: warning: provider `openruter` is in neither providers.yaml nor "
            "the catalog, so its route refuses: did you mean `openrouter`?",
        ),
        (
            ("--provider", "anthropic", "--model", "claude-sonet-4-5"),
            "visiongate proxy: warning: model `claude-sonet-4-5` is not in models.dev snapshot "
            "f3fc692 of 2026-07-02: did you mean `claude-sonnet-4-5`?",
        ),
    ],
    ids=["provider", "model"],
)
def test_a_misspelt_provider_or_model_is_said_once_at_start(
    tmp_path: Path, target: tuple[str, ...], line: str
) -> None:
    err = proxy_stderr(tmp_path, target=target)
    assert err.count(line) == 1, err


def test_a_misspelt_config_key_is_said_as_the_error_it_is(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("agent:\n  image_input_mod: text\nvision:\n  embed_taget_bytes: 1\n")
    target = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")
    err = proxy_stderr(tmp_path, "--config", str(config), target=target)
    assert err.count("visiongate proxy: error: ") == 1, err
    assert (
        "agent.yaml:2:3: unknown key `image_input_mod` under `agent` looks like "
        "`image_input_mode`, which routes images: failing closed to `text`" in err
    )
    assert err.count("visiongate proxy: warning: ") == 1
    assert "unknown key `embed_taget_bytes` under `vision` is ignored" in err


def test_a_clean_target_says_nothing(tmp_path: Path) -> None:
    err = proxy_stderr(tmp_path, target=("--provider", "anthropic", "--model", "claude-sonnet-4-5"))
    assert "warning" not in err and "error" not in err, err


def test_the_readme_shows_the_lines_the_proxy_prints(tmp_path: Path) -> None:
    from _doc_blocks import operator_lines

    (tmp_path / "agent.yaml").write_text("agent:\n  image_input_mod: text\n")
    target = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")
    said = proxy_stderr(tmp_path, "--config", "agent.yaml", target=target)
    said += proxy_stderr(
        tmp_path, target=("--provider", "openruter", "--model", "anthropic/claude-sonnet-4.5")
    )
    shown = [line for line in operator_lines() if line.startswith("visiongate proxy: ")]
    shown = [line for line in shown if not line.startswith("visiongate proxy: session ")]
    assert len(shown) == 2
    for line in shown:
        assert line in said.splitlines(), line


@pytest.mark.anyio
async def test_a_misspelt_routing_key_keeps_the_proxys_images_on_the_text_lane(
    tmp_path: Path,
) -> None:
    """Regression: through the proxy, `agnet: {image_input_mode: text}` attached the image
    (the key was ignored, and `auto` sent pixels to a model that reads them)."""
    from _proxy_helpers import proxied, read_trace
    from mcp.types import ImageContent

    config, trace = tmp_path / "agent.yaml", tmp_path / "trace.jsonl"
    config.write_text("agnet:\n  image_input_mode: text\n")
    options = ("--config", str(config), "--trace", str(trace))
    argv = proxy_argv(
        server_command(),
        *options,
        target=("--provider", "anthropic", "--model", "claude-sonnet-4-5"),
    )
    async with proxied(argv, tmp_path) as session:
        result = await session.call_tool("screenshot", {})
    assert not [block for block in result.content if isinstance(block, ImageContent)]
    (record,) = read_trace(trace)
    assert record["lane"] == "text" and record["facts"]["mode"] == "text"
    assert "misspelt key `agnet`" in record["provenance"]["mode"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
