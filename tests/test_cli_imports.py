"""Cold start: each command imports what it uses and nothing else (issue 14).

Counted as modules, not timed: the timing is `bench/bench_cli.py`'s job. A command run in a
fresh interpreter reports which heavy packages ended up in `sys.modules`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
HEAVY = ("cerberus", "durable", "mcp", "PIL", "httpx", "pydantic", "ruamel", "jsonschema", "anyio")
PROBE = """
import json, sys
from visiongate.cli import main
code = main(sys.argv[1:])
heavy = {heavy!r}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith("visiongate"))
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded_modules(*argv: str, home: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "VISIONGATE_POLICY_CACHE": str(home / "cache")},
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def roots(modules: set[str]) -> set[str]:
    return {module.split(".")[0] for module in modules if not module.startswith("visiongate")}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("imports")


def test_help_imports_no_command_and_no_engine(home: Path) -> None:
    modules = loaded_modules("--help", home=home)
    # `_errors`: the class every exception derives from; `_lazy`: the facade's first-use import.
    shell = {
        "visiongate",
        "visiongate.kernel",
        "visiongate.kernel._errors",
        "visiongate.kernel._lazy",
    }
    assert modules == {*shell, "visiongate.cli", "visiongate.cli._stdout"}


# `mcp` is left out: cli/mcp.py (restructured on the MCP engineer's branch) imports the SDK
# at module level, as it must for `mcp call` itself.
@pytest.mark.parametrize(
    "command", ["lint", "decide", "route", "probe", "fmt", "test", "docs", "proxy", "audit"]
)
def test_a_commands_help_imports_its_module_only(command: str, home: Path) -> None:
    modules = loaded_modules(command, "--help", home=home)
    commands = {m for m in modules if m.startswith("visiongate.cli.") and m.count(".") >= 2}
    commands -= {"visiongate.cli._stdout", "visiongate.cli._common", "visiongate.cli.policy"}
    assert len(commands) == 1 and commands.pop().endswith(command), modules
    assert not roots(modules) and "visiongate.engine" not in modules


def test_audit_options_match_the_engine() -> None:
    # `audit --help` lists these without importing the engine: its copies must not drift.
    from visiongate.cli import audit
    from visiongate.engine.tooling.audit import _report, _result

    assert audit.FORMATS == _report.FORMATS
    assert audit.GROUP_NAMES == _result.GROUP_NAMES


def test_picture_formats_match_the_engine() -> None:
    # `explain` and `diff` list these without importing the engine: the copy must not drift.
    from visiongate.cli.policy import PICTURES
    from visiongate.engine.tooling import pictures

    assert PICTURES == pictures.PICTURES


def test_decide_facts_imports_no_adapter_sdk_or_image_library(home: Path) -> None:
    argv = ("decide", "--facts", "mode=auto,catalog=vision,aux=unset,path=accepts")
    loaded_modules(*argv, home=home)  # fills the compile cache
    modules = loaded_modules(*argv, home=home)
    assert not roots(modules) & {"mcp", "PIL", "httpx", "pydantic", "ruamel", "jsonschema"}
    assert "visiongate.engine.facts._registry_load" not in modules  # the registry is not read


def test_lint_with_a_warm_cache_imports_no_validator(home: Path) -> None:
    loaded_modules("lint", "policies/default.yaml", home=home)
    modules = loaded_modules("lint", "policies/default.yaml", home=home)
    assert "cerberus" not in roots(modules)
    assert not roots(modules) & {"mcp", "PIL", "httpx", "pydantic", "ruamel", "jsonschema"}
