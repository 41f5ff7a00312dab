"""Every example in README.md and policy_docs/README.md runs as written (issue 14).

Each fenced block is claimed by one check below: commands run in a workspace that holds what
they name (`my-policy.yaml`, `decisions.jsonl`, a git history, ...), policies load and lint,
fragments of the language load when put in place, Python runs. A block no check claims fails
`test_every_block_is_checked`, so a new example cannot go untested.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
import yaml
from _doc_blocks import (
    README,
    ROOT,
    Block,
    Command,
    every_block,
    shell_commands,
    workflow_commands,
)
from _routing_helpers import VisionEndpoint, aux_config
from _warm import server_command

from visiongate.adapters.mcp.example_server import screenshot_png
from visiongate.cli import main
from visiongate.engine import Gate
from visiongate.engine._load import compile_policy_text, load_policy
from visiongate.engine.facts.config._config import AgentConfig
from visiongate.engine.tooling.lint._check import lint_text

pytest_plugins = ["pytester"]

NEEDS_NETWORK = ("probe",)
"""Commands that need a provider's endpoint and key: not run here (tests/test_probe.py runs
the probe against a loopback endpoint)."""
BLOCKS = every_block()


def _find(predicate: Any) -> list[Block]:
    return [block for block in BLOCKS if predicate(block)]


def is_shell(block: Block) -> bool:
    return block.language in ("", "sh") and "visiongate " in block.text and not block.marker


def is_environment(block: Block) -> bool:
    """A shell block that only sets the environment (`export OTEL_...=...`)."""
    lines = [line for line in block.text.splitlines() if line.strip()]
    return block.language == "sh" and all(line.startswith("export ") for line in lines)


def is_quickstart(block: Block) -> bool:
    # `.ci/run` runs them (the last in its Python 3.13 environment)
    return block.marker in ("ci:demo-command", "ci:test-command", "ci:durable-rules-py313")


def is_workflow(block: Block) -> bool:
    return block.language == "yaml" and block.text.startswith("name: ") and "jobs:" in block.text


def _start(block: Block, prefix: str, language: str = "yaml") -> bool:
    return block.language == language and block.text.startswith(prefix)


COMPLETE = _find(lambda b: _start(b, "policy: example"))[0].text
TEST_FILE = _find(lambda b: _start(b, "visiongate: policy-test"))[0].text


def workflow_steps(block: Block) -> list[dict[str, Any]]:
    document = yaml.safe_load(block.text)
    return [step for job in document["jobs"].values() for step in job["steps"]]


def every_command() -> list[Command]:
    commands = [c for block in _find(is_shell) for c in shell_commands(block)]
    for block in _find(is_workflow):
        commands += workflow_commands(block, workflow_steps(block))
    return [c for c in commands if c.argv[0] not in NEEDS_NETWORK]


# -- the workspace the commands run in -------------------------------------------------------------


def _git(workspace: Path, *argv: str) -> None:
    subprocess.run(["git", *argv], cwd=workspace, check=True, capture_output=True)


def _trace(workspace: Path) -> None:
    """`decisions.jsonl`, whose first record has the id the README explains, and the same
    records as the README's audit examples find them: rotated under `logs/`, gzipped."""
    trace = workspace / "decisions.jsonl"
    gate = Gate.load(trace=trace, routes=False)
    for provider, model in (("anthropic", "claude-sonnet-4-5"), ("openrouter", "gpt-4o")):
        gate.decide(provider, model)
    wanted = re.search(r"--decision ([\w-]+)", README.read_text())
    assert wanted
    lines = trace.read_text().splitlines()
    first = json.loads(lines[0])
    first["decision_id"] = wanted.group(1)
    trace.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    for host in ("host-a", "host-b"):
        (workspace / "logs" / host).mkdir(parents=True)
    shutil.copy(trace, workspace / "logs" / "host-a" / "decisions.jsonl")
    shutil.copy(trace, workspace / "logs" / "decisions.jsonl")
    packed = gzip.compress(trace.read_bytes())
    (workspace / "logs" / "host-b" / "decisions.20261130T000000000000Z.jsonl.gz").write_bytes(
        packed
    )
    (workspace / "old.jsonl.gz").write_bytes(packed)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed (`visiongate diff HEAD~1:...` reads history)")
    folder = tmp_path_factory.mktemp("workspace")
    shutil.copytree(ROOT / "policies", folder / "policies")
    shutil.rmtree(folder / "policies" / "catalog")
    (folder / "pyproject.toml").write_text(project_config_block().text)
    (folder / "my-policy.yaml").write_text(COMPLETE)
    (folder / "my-policy.test.yaml").write_text(TEST_FILE.replace("example.yaml", "my-policy.yaml"))
    (folder / "agent.yaml").write_text("agent:\n  image_input_mode: auto\n")
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "-c", "user.email=d@example.org", "-c", "user.name=d", "commit", "-qm", "one")
    _git(
        folder,
        "-c",
        "user.email=d@example.org",
        "-c",
        "user.name=d",
        "commit",
        "-qm",
        "two",
        "--allow-empty",
    )
    _trace(folder)
    return folder


def project_config_block() -> Block:
    return _find(lambda b: _start(b, "[tool.visiongate]", "toml"))[0]


@pytest.mark.parametrize("command", every_command(), ids=lambda c: c.name)
def test_every_documented_command_runs_as_written(
    command: Command,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(workspace / "images"))
    monkeypatch.setenv("XDG_STATE_HOME", str(workspace / "state"))  # its routes file
    if command.argv[:2] == ("docs", "--check"):
        assert main(["docs"]) == 0  # a project whose pages were generated and committed
        capsys.readouterr()
    if command.stdin_from:
        produced = subprocess.run(
            command.stdin_from, shell=True, cwd=workspace, capture_output=True, check=True
        )
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(produced.stdout)))
    code = main(list(command.argv))
    out, err = capsys.readouterr()
    assert code in (0, 1), f"exit {code}: {err}"  # 1: findings, which examples may show
    assert "Traceback" not in out + err
    if command.stdout_file:
        (workspace / command.stdout_file).write_text(out)


def test_the_ci_commands_show_real_results(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["lint", "--strict", "policies"]) == 0
    assert main(["test", "--min-coverage", "100", "policies"]) == 0
    assert main(["fmt", "--check"]) == 0
    assert main(["diff", "policies/default.yaml", "my-policy.yaml"]) == 1  # lanes do change
    assert "cell(s) change lane" in capsys.readouterr().out


# -- policies and fragments of the language --------------------------------------------------------


def test_the_complete_example_lints_clean_explains_54_cells_and_its_tests_cover_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("example.yaml").write_text(COMPLETE)
    Path("example.test.yaml").write_text(TEST_FILE)
    assert main(["lint", "example.yaml"]) == 0
    assert "0 error(s), 0 warning(s), 0 info(s)" in capsys.readouterr().out
    assert main(["explain", "--policy", "example.yaml"]) == 0
    assert capsys.readouterr().out.count("\n") == 54 + 3
    assert main(["test", "example.test.yaml"]) == 0
    assert "rules 3/3 (100%), cells 54/54 (100%)" in capsys.readouterr().out


def test_the_readme_policy_is_the_heart_of_the_default_policy() -> None:
    [block] = _find(lambda b: b.file == "README.md" and _start(b, "policy: default"))
    excerpt = compile_policy_text(block.text, "README.md").policy
    default = load_policy("default").policy
    rules = {rule.id: (dict(rule.when), rule.lane) for rule in default.rules}
    for rule in excerpt.rules:
        assert rules[rule.id] == (dict(rule.when), rule.lane), rule.id
    assert (excerpt.hit_policy, excerpt.default) == (default.hit_policy, default.default)
    assert excerpt.execution == default.execution


def _in_place(fragment: str) -> str:
    """A fragment of the language put where it belongs in the complete example."""
    if fragment.startswith("when:"):
        # The native lane, so that every entry of the `when` decides something.
        rule = "  - id: fragment\n    " + fragment.strip() + "\n    lane: native\n    reason: r\n"
        return COMPLETE.split("rules:")[0] + "rules:\n" + rule
    return COMPLETE + fragment


FRAGMENTS = [
    b
    for b in BLOCKS
    if b.language == "yaml"
    and b.text.startswith(("when:", "execution:", "sanitize:", "lint:", "drops_invariants:"))
]


@pytest.mark.parametrize("block", FRAGMENTS, ids=lambda b: b.where)
def test_every_fragment_of_the_language_loads_in_place(block: Block) -> None:
    report = lint_text(_in_place(block.text), "fragment.yaml")
    problems = [d.render() for d in report.diagnostics if d.severity != "info" and d.code != "gap"]
    assert not problems, problems


def test_the_exemption_example_passes_strict_lint_with_its_two_exemptions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [block] = _find(lambda b: _start(b, "policy: exempted"))
    policy = tmp_path / "exempted.yaml"
    policy.write_text(block.text)
    assert main(["lint", "--strict", str(policy), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {item["code"] for item in report["files"][0]["suppressed"]} == {"gap", "redundant"}


@pytest.mark.parametrize("block", _find(lambda b: _start(b, "auxiliary:")), ids=lambda b: b.where)
def test_the_auxiliary_vision_examples_are_clean_agent_configs(block: Block) -> None:
    assert AgentConfig.from_text(block.text, "agent.yaml").diagnostics == ()


def test_the_project_configuration_shown_is_this_repositorys() -> None:
    shown = tomllib.loads(project_config_block().text)["tool"]["visiongate"]
    actual = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["visiongate"]
    assert shown == actual


def test_the_pytest_example_collects_undeclared_tests_under_the_configured_path(
    pytester: pytest.Pytester,
) -> None:
    [block] = _find(lambda b: _start(b, "[tool.pytest.ini_options]", "toml"))
    pytester.makefile(".toml", pyproject=block.text)
    folder = pytester.mkdir("policies")
    (folder / "example.yaml").write_text(COMPLETE)
    (folder / "example.test.yaml").write_text(TEST_FILE.replace("visiongate: policy-test", ""))
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=5)


# -- Python ----------------------------------------------------------------------------------------


def python_blocks() -> list[Block]:
    return _find(lambda b: b.language == "python")


def test_the_python_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [block] = [b for b in python_blocks() if "Gate.load()" in b.text]
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(block.text, block.where, "exec"), namespace)  # our own README, run as written
    assert namespace["decision"].lane == "native"


SYNC_PYTHON = [
    b
    for b in python_blocks()
    if "await " not in b.text and "Gate.load()" not in b.text and b.marker is None
]


@pytest.mark.slow  # the README's block runs `visiongate route` as a process
def test_the_schema_validation_example_checks_nested_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [block] = [b for b in python_blocks() if b.marker == "ci:schema-validation"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path / "images"))
    namespace: dict[str, Any] = {}
    exec(compile(block.text, block.where, "exec"), namespace)  # our own README, run as written
    output = json.loads(namespace["done"].stdout)
    del output["record"]["lane"]  # the nested record is checked against its own schema
    with pytest.raises(jsonschema.ValidationError, match="'lane' is a required property"):
        namespace["validate"]("route-output", output)


@pytest.mark.parametrize("block", SYNC_PYTHON, ids=lambda b: b.where)
def test_every_other_python_example_runs(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")  # the OpenTelemetry example sends nothing
    namespace: dict[str, Any] = {}
    exec(compile(block.text, block.where, "exec"), namespace)  # our own README, run as written
    gate = namespace["gate"]
    gate.decide("anthropic", "claude-sonnet-4-5")
    assert Path("decisions.jsonl").read_text().count("\n") == 1


@pytest.mark.parametrize("block", [b for b in BLOCKS if is_environment(b)], ids=lambda b: b.where)
def test_environment_examples_run_in_a_shell(block: Block) -> None:
    done = subprocess.run(["bash", "-c", block.text + "\nenv"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for line in block.text.split("export ")[1:]:
        for assignment in line.split():
            assert assignment in done.stdout.splitlines()


def test_the_agent_developer_example_runs_against_a_real_mcp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, endpoint: VisionEndpoint
) -> None:
    """The example's context (an MCP result, a tool call, a provider and model, a PNG) comes
    from a real session with the example server, and its `agent.yaml` names a vision endpoint
    on loopback; the block itself runs as written."""
    [block] = [b for b in python_blocks() if "router = Router(gate)" in b.text]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path / "images"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the refusal it reports
    config = aux_config(endpoint.base_url, image_input_mode="native")
    Path("agent.yaml").write_text(yaml.safe_dump(config))
    body = textwrap.indent(block.text, "    ")
    source = f"async def example(result, call, p, m, png, read):\n{body}\n    return locals()\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, block.where, "exec"), namespace)  # our own README, run as written
    found = asyncio.run(_with_result(namespace["example"]))
    # after the refusal, the blob comes as its path, like the screenshot
    said = [c.get("text", "") for c in found["resource"].to_mcp()["contents"]]
    assert found["resource"].routed[0].lane == "text" and any("MEDIA:" in t for t in said)
    assert found["routed"].lane == "native" and found["messages"]
    assert found["shot"].lane == "text"  # after the refusal it reported, the route refuses
    assert found["answer"].lane == "text" and endpoint.questions  # described on loopback
    assert Path("decisions.jsonl").read_text().count("\n") >= 4


def test_the_agent_framework_example_runs_in_a_live_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "any result, whole turns, bounded history" block, run as written inside a real
    session with the example server: `router`, `session`, two routed results of one turn
    and the conversation so far are what an agent loop would have at that point."""
    [block] = [b for b in python_blocks() if "router.render_turn(" in b.text]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VISIONGATE_CACHE_DIR", str(tmp_path / "images"))
    body = textwrap.indent(block.text, "    ")
    source = (
        "async def example(router, session, result, p, m, name, routed_a, routed_b, messages):\n"
        "    from mcp.types import CallToolResult\n"
        f"{body}\n    return locals()\n"
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, block.where, "exec"), namespace)  # our own README, run as written
    found = asyncio.run(_in_session(namespace["example"]))
    assert found["routed"].lane == "native"
    assert [tool.name for tool in found["tools"].tools][:1] == ["screenshot"]
    roles = [message["role"] for message in found["request"]]
    assert roles[-3:] == ["tool", "tool", "user"]  # every tool reply before the images


async def _in_session(example: Any) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from visiongate.adapters import Router

    router = Router(Gate.load(routes=False))
    p, m = "openai", "gpt-5"
    command = server_command()
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("screenshot", {})
        first = await router.mcp(
            await session.call_tool("tile", {"number": 1}), provider=p, model=m, tool_name="tile"
        )
        second = await router.mcp(
            await session.call_tool("tile", {"number": 2}), provider=p, model=m, tool_name="tile"
        )
        messages: list[Any] = [{"role": "user", "content": "two tiles, please"}]
        found: dict[str, Any] = await example(
            router, session, result, p, m, "screenshot", first, second, messages
        )
    return found


async def _with_result(example: Any) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = server_command()
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("screenshot", {})
    # `resources/read` from a server whose resources are images (the example server has none)
    resources = StdioServerParameters(
        command=sys.executable, args=[str(Path(__file__).parent / "_resource_server.py")]
    )
    async with stdio_client(resources) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        resource = await session.read_resource("screen://shot")
    call = SimpleNamespace(id="call_1")
    found: dict[str, Any] = await example(
        result, call, "anthropic", "claude-sonnet-4-5", screenshot_png(), resource
    )
    return found


# -- nothing goes unchecked ------------------------------------------------------------------------


def test_every_block_is_checked() -> None:
    claimed = {
        b.where
        for b in BLOCKS
        if is_shell(b)
        or is_environment(b)
        or is_quickstart(b)
        or is_workflow(b)
        or b in FRAGMENTS
        or b.language == "python"
        or b.marker == "ci:proxy-config"  # test_proxy_units: what --print-config prints
        or (b.marker or "").startswith("ci:gateway-")  # test_gateway_docs
        or b.marker == "ci:operator-lines"  # test_config_misspelt_keys, test_*_notices
        or any(
            _start(b, prefix, language)
            for prefix, language in (
                ("policy: example", "yaml"),
                ("policy: default", "yaml"),
                ("policy: exempted", "yaml"),
                ("visiongate: policy-test", "yaml"),
                ("auxiliary:", "yaml"),
                ("[tool.visiongate]", "toml"),
                ("[tool.pytest.ini_options]", "toml"),
            )
        )
    }
    unchecked = [b.where for b in BLOCKS if b.where not in claimed]
    assert not unchecked, f"examples no test runs: {unchecked}"
    assert every_command()
