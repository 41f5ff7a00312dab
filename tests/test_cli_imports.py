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

from visiongate.cli import COMMANDS

ROOT = Path(__file__).parent.parent
HEAVY = (
    *("cerberus", "durable", "mcp", "PIL", "httpx", "pydantic", "ruamel", "jsonschema", "anyio"),
    *("yaml", "regex", "msgspec"),
)
PROBE = """
import json, sys
from visiongate.cli import main
code = main(sys.argv[1:])
heavy = {heavy!r}
loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith("visiongate"))
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded_modules(*argv: str, home: Path) -> set[str]:
    done = probed(PROBE.format(heavy=set(HEAVY)), *argv, home=home)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def probed(
    code: str, *argv: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter from the root, with only PATH and a private cache
    (or `env`)."""
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env if env is not None else private_env(home),
    )


def private_env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "VISIONGATE_POLICY_CACHE": str(home / "cache")}


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


HELP_PROBE = """
import json, sys
from visiongate.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
outside = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names)
ours = [m for m in sys.modules if m.startswith(("visiongate.engine", "visiongate.adapters"))]
print(json.dumps([sorted(outside), sorted(ours)]), file=sys.stderr)
"""
# What an editable install or the interpreter itself puts in `sys.modules`: `site` imports
# `sitecustomize` and `usercustomize` where the interpreter ships one (Debian's python3.11 does).
_START_UP = {
    *("visiongate", "__main__", "_distutils_hack", "__editable___visiongate_0_1_0_finder"),
    *("sitecustomize", "usercustomize"),
}


@pytest.mark.parametrize("argv", [[name, "--help"] for name in COMMANDS] + [["mcp", "call", "-h"]])
def test_every_commands_help_imports_nothing_outside_the_standard_library(
    argv: list[str], home: Path
) -> None:
    """Regression (issue 37): `mcp --help` and `demo --help` loaded the whole MCP SDK (650 ms)
    before the arguments were parsed; a command's help is argparse and its own options."""
    done = probed(HELP_PROBE, *argv, home=home)
    outside, ours = json.loads(done.stderr.strip().splitlines()[-1])
    assert set(outside) <= _START_UP and not ours, (outside, ours)


def test_mcp_help_defaults_match_the_session() -> None:
    # `mcp --help` prints these without importing the SDK: its copies must not drift.
    from visiongate.adapters.mcp import _session
    from visiongate.cli import mcp

    assert mcp.DEFAULT_CONNECT_TIMEOUT_S == _session.DEFAULT_CONNECT_TIMEOUT_S
    assert mcp.DEFAULT_REQUEST_TIMEOUT_S == _session.DEFAULT_REQUEST_TIMEOUT_S
    assert mcp.DEFAULT_MAX_MESSAGE_BYTES == _session.DEFAULT_MAX_MESSAGE_BYTES


@pytest.mark.parametrize(
    "command", ["lint", "decide", "route", "probe", "fmt", "test", "docs", "proxy", "audit"]
)
def test_a_commands_help_imports_its_module_only(command: str, home: Path) -> None:
    modules = loaded_modules(command, "--help", home=home)
    commands = {m for m in modules if m.startswith("visiongate.cli.") and m.count(".") >= 2}
    commands -= {"visiongate.cli._stdout", "visiongate.cli._common", "visiongate.cli.policy"}
    # A command's own private modules (`cli/proxy/_options`) are part of it.
    commands -= {m for m in commands if m.rpartition(".")[0] in commands and "._" in m}
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
    assert "visiongate.engine.facts.registry._load" not in modules  # the registry is not read


def test_lint_with_a_warm_cache_imports_no_validator(home: Path) -> None:
    loaded_modules("lint", "policies/default.yaml", home=home)
    modules = loaded_modules("lint", "policies/default.yaml", home=home)
    assert "cerberus" not in roots(modules)
    assert not roots(modules) & {"mcp", "PIL", "httpx", "pydantic", "ruamel", "jsonschema"}


def test_decide_with_warm_tables_imports_no_validator(home: Path) -> None:
    """Regression (issue 37): every `decide --provider --model` validated the bundled registry
    with cerberus, importing it (35 ms a start)."""
    argv = ("decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    loaded_modules(*argv, home=home)  # fills the compile cache and the fact tables
    modules = loaded_modules(*argv, home=home)
    assert not roots(modules) & {"cerberus", "mcp", "PIL", "httpx", "pydantic", "ruamel"}
    assert "visiongate.engine.facts.registry._load" not in modules  # read back, not parsed
    assert "visiongate.engine._validate" not in modules


def test_decide_with_a_warm_cache_parses_no_yaml_and_loads_no_trace_encoder(home: Path) -> None:
    """Regression (issue 37): with the compiled policy cached, every `decide` still parsed the
    policy's YAML for its locations (PyYAML ~22 ms, the loader ~41 ms), imported msgspec for a
    trace it did not write (~13 ms) and `regex` to show ASCII lines (~12 ms)."""
    argv = ("decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    loaded_modules(*argv, home=home)  # fills the compile cache and the fact tables
    modules = loaded_modules(*argv, home=home)
    assert not roots(modules) & {"yaml", "regex", "msgspec"}, sorted(roots(modules))
    assert not {m for m in modules if m.startswith("visiongate.engine.trace.")} - {
        "visiongate.engine.trace._encode"  # the record's timestamp; its encoder is lazy
    }
    assert not modules & {"visiongate.engine._yaml._parse", "visiongate.engine._yaml._build"}


def test_a_cold_decide_does_parse_the_yaml(home: Path) -> None:
    # The budget above holds because the cache answers, not because the probe misses a parse.
    argv = ("decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    cold = home / "cold"
    modules = loaded_modules(*argv, home=cold)
    assert "yaml" in roots(modules) and "visiongate.engine._yaml._parse" in modules


def test_the_recorded_package_version_is_the_installed_one() -> None:
    # `package_version` returns the package's constant rather than reading the metadata.
    from importlib import metadata

    from visiongate.engine._decision import package_version

    assert package_version() == metadata.version("visiongate")


START_UP_PROBE = "import sys; loaded = sorted(sys.modules); import json; print(json.dumps(loaded))"
AFTER_PROBE = """
import sys
from visiongate.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted(sys.modules)
import json
print(json.dumps(loaded), file=sys.stderr)
"""
# What a server command's `--help` has no use for: the event loop, `typing` and `pathlib`
# (with `urllib`), the shapes' dataclasses (and `inspect` behind them), JSON, the engine.
NOT_FOR_HELP = (
    *("asyncio", "typing", "pathlib", "urllib", "dataclasses", "inspect", "ast", "json"),
    *("visiongate.engine", "visiongate.adapters", "visiongate.kernel.shapes._shape"),
)


def added_modules(*argv: str, home: Path) -> set[str]:
    """The modules a command imports beyond the interpreter's own start-up (in an editable
    install its finder already imports `pathlib` and `urllib` there: not counted)."""
    env = {"PATH": "/usr/bin:/bin", "VISIONGATE_POLICY_CACHE": str(home / "cache")}
    runs = [[START_UP_PROBE], [AFTER_PROBE, *argv]]
    found = [
        subprocess.run(
            [sys.executable, "-c", *run],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        for run in runs
    ]
    start_up = set(json.loads(found[0].stdout))
    return set(json.loads(found[1].stderr.strip().splitlines()[-1])) - start_up


@pytest.mark.parametrize(
    "argv", [["mcp", "--help"], ["mcp", "call", "-h"], ["demo", "--help"], ["route", "--help"]]
)
def test_a_server_commands_help_is_argparse_and_its_options(argv: list[str], home: Path) -> None:
    """Regression (issue 37): measured installed, `mcp --help` took 5.9x `python -c pass`:
    `route` imported asyncio for its `run`, and `typing`, `pathlib` and the shapes'
    dataclasses came with the shared modules."""
    added = added_modules(*argv, home=home)
    unneeded = {m for m in added if m.startswith(NOT_FOR_HELP)}
    assert not unneeded, sorted(unneeded)


def test_the_probe_names_are_the_shapes_own() -> None:
    # `visiongate.kernel.shapes` writes both lists out, so `--help` builds no shape.
    from visiongate.kernel import shapes

    assert tuple(shape.name for shape in shapes.SHAPES) == shapes.API_NAMES
    assert tuple(s.name for s in shapes.SHAPES if s.probe is not None) == shapes.PROBE_APIS


GATE_PROBE = """
import json, sys
from visiongate.engine import Gate
gate = Gate.load()
gate.decide_facts("auto", "vision", "unset", "accepts")
print(json.dumps(sorted(m for m in sys.modules if m.startswith("visiongate"))))
"""
# What resolves a provider and model: read when the first `decide` needs it, not at load.
RESOLUTION = (
    *("visiongate.engine.facts._catalog", "visiongate.engine.facts._catalog_store"),
    *("visiongate.engine.facts._resolver", "visiongate.engine.facts._routes"),
)


def test_loading_a_gate_imports_no_catalog_resolver_or_routes(home: Path) -> None:
    """Regression (issue 37): `from visiongate.engine import Gate` imported the catalog, the
    resolver and the learned routes (and `engine.facts` all of them at once) before the
    first decision that needs them: the proxy paid for them before its first answer."""
    done = probed(GATE_PROBE, home=home)
    modules = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "visiongate.engine._gate" in modules
    assert not modules & set(RESOLUTION), sorted(modules & set(RESOLUTION))


def test_a_warm_decide_imports_no_process_or_event_loop_machinery(home: Path) -> None:
    """Regression (issue 37): a warm `decide` starts no compile worker, yet imported
    `subprocess` (and `selectors`, `signal`) for it, and `secrets` (with `random`, `base64`)
    for the ids' prefix, which `os.urandom` gives alike."""
    argv = ("decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5")
    added_modules(*argv, home=home)  # fills the compile cache and the fact tables
    added = added_modules(*argv, home=home)
    assert not added & {"subprocess", "secrets", "asyncio", "selectors"}, sorted(added)


ALL_PROBE = """
import json, sys
from visiongate.cli import main
main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
# What a repeated `decide --provider --model` no longer imports (issue 37, decide8x): the
# first decision's facts are read back whole, so nothing resolves, loads the catalog or the
# registry's tables, or writes a file.
NOT_FOR_A_KEPT_PAIR = (
    *("datetime", "tempfile", "zipfile", "importlib.readers", "importlib.resources", "difflib"),
    *("visiongate.engine.facts._resolver", "visiongate.engine.facts._catalog_store"),
    *("visiongate.engine.facts._catalog", "visiongate.engine.facts._catalog_read"),
    *("visiongate.engine.facts._routes", "visiongate.engine.facts._runtimes"),
    *("visiongate.engine.facts._catalog_changes", "visiongate.engine.facts.auxiliary"),
    *("visiongate.engine.facts.registry._registry", "visiongate.engine.facts.registry._types"),
    *("visiongate.kernel.shapes._table", "visiongate.kernel._platform"),
)


REPEATED_DECIDE = ("decide", "--provider", "anthropic", "--model", "claude-sonnet-4-5")


def repeat_env(tmp_path: Path) -> dict[str, str]:
    """An environment of its own for two `decide`s in a row: caches, no refreshed catalog, no
    routes file."""
    return {
        **private_env(tmp_path),
        "VISIONGATE_FACTS_CACHE": str(tmp_path / "facts"),  # no refreshed catalog
        "XDG_STATE_HOME": str(tmp_path / "state"),  # no routes file
    }


def test_a_repeated_decide_reads_its_pair_back_and_imports_no_resolver(tmp_path: Path) -> None:
    env = repeat_env(tmp_path)
    runs = [  # the first fills the caches
        probed(ALL_PROBE, *REPEATED_DECIDE, home=tmp_path, env=env) for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout and runs[1].stdout.startswith("lane:")
    modules = set(json.loads(runs[1].stderr.strip().splitlines()[-1]))
    unneeded = {m for m in modules if m.startswith(NOT_FOR_A_KEPT_PAIR)}
    assert not unneeded, sorted(unneeded)
    cold = set(json.loads(runs[0].stderr.strip().splitlines()[-1]))
    assert "visiongate.engine.facts._resolver" in cold  # the budget holds because of the cache


# What a repeated `decide --provider --model` no longer imports (issue 37, decide7x): its
# logger is looked up only when something is logged, its gate makes a policy watcher only to
# reload, its hashes and the pair's reader are CPython's own (no OpenSSL's `hashlib`, no
# `pickle.py`), argparse is handed its width (no `shutil`), its locks come from `_thread`, and
# neither the registry's other values, the config's provider declarations, the compile worker
# nor the docs' channel notes are made.
NOT_FOR_A_REPEAT = (
    *("logging", "hashlib", "_hashlib", "pickle", "shutil", "threading", "queue", "lzma"),
    *("visiongate.engine._watch", "visiongate.engine._compile_worker"),
    *("visiongate.engine.facts.registry._types", "visiongate.engine.facts.config._providers"),
    "visiongate.engine.tooling",
)


def unneeded_on_a_repeat(tmp_path: Path, prelude: str = "") -> set[str]:
    """The modules of `NOT_FOR_A_REPEAT` the second of two `decide`s imports beyond the
    interpreter's own start-up, with `prelude` run before each."""
    env = repeat_env(tmp_path)
    start_up = set(json.loads(probed(START_UP_PROBE, home=tmp_path, env=env).stdout))
    runs = [  # the first fills the caches
        probed(prelude + ALL_PROBE, *REPEATED_DECIDE, home=tmp_path, env=env) for _ in range(2)
    ]
    assert runs[1].stdout.startswith("lane:"), runs[1].stderr
    modules = set(json.loads(runs[1].stderr.strip().splitlines()[-1])) - start_up
    return {m for m in modules if m.startswith(NOT_FOR_A_REPEAT)}


def test_a_repeated_decide_imports_no_logging_hashlib_shutil_or_watcher(tmp_path: Path) -> None:
    """Regression (issue 37): measured installed, a repeated `decide` took 8.3x to 8.6x
    `python -c pass`; `logging`, `hashlib` (OpenSSL), `pickle.py`, `shutil` (with `lzma`),
    `threading`, the policy watcher (with `queue`) and 31 dataclasses were most of it."""
    assert not unneeded_on_a_repeat(tmp_path)


def test_the_repeat_budget_sees_a_deliberate_import(tmp_path: Path) -> None:
    # The budget above holds because nothing imports them, not because the probe misses them.
    prelude = "import logging, shutil\nimport visiongate.engine._watch\n"
    found = unneeded_on_a_repeat(tmp_path, prelude)
    assert {"logging", "shutil", "visiongate.engine._watch"} <= found, found


@pytest.mark.parametrize("data", [b"", b"abc", bytes(range(256)) * 300])
def test_the_built_in_hashes_give_hashlibs_digests(data: bytes) -> None:
    # `kernel._digest` stands in for `hashlib` at start-up: every digest must be the same.
    import hashlib

    from visiongate.kernel import _digest

    assert _digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert _digest.blake2b(data).hexdigest() == hashlib.blake2b(data).hexdigest()


@pytest.mark.parametrize("columns", [None, "", "abc", "-3", "0", "37", "200"])
def test_the_parsers_width_is_the_one_argparse_would_work_out(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command line's formatter is handed the width argparse reads with `shutil`.
    import shutil

    from visiongate.cli import _terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _terminal_columns() == shutil.get_terminal_size().columns
