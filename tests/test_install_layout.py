"""The checkout never shadows the installed package (issue 10).

Python puts the working directory first on `sys.path` for `python -m` and `python -c`. When
the package shell lived in `./visiongate/` (without `engine/` and `adapters/`, which are
mapped in at install time), every such command run from the project root imported the
half-package and failed. These tests install the project non-editably into a folder of
their own and run the README's commands from the project root against it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A non-editable install of this checkout (without its dependencies) in a folder."""
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    yield target


def _run_from_root(installed: Path, *command: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, PYTHONPATH=str(installed))
    return subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_no_folder_at_the_root_is_named_like_the_package() -> None:
    assert not (ROOT / "visiongate").exists()


def test_python_m_visiongate_help_from_the_root(installed: Path) -> None:
    done = _run_from_root(installed, "-m", "visiongate", "--help")
    assert done.returncode == 0, done.stderr
    assert "decide" in done.stdout


def test_readme_api_import_from_the_root_uses_the_installed_package(installed: Path) -> None:
    code = (
        "import visiongate, visiongate.engine, visiongate.adapters\n"
        "from visiongate.engine import Gate\n"
        "print(visiongate.__file__)\n"
        "print(Gate.load().decide('anthropic', 'claude-sonnet-4-5', trace=False).lane)\n"
    )
    done = _run_from_root(installed, "-c", code)
    assert done.returncode == 0, done.stderr
    location, lane = done.stdout.split()
    assert Path(location).is_relative_to(installed)
    assert lane == "native"


def test_readme_mcp_call_example_from_the_root(installed: Path) -> None:
    done = _run_from_root(
        installed,
        "-m",
        "visiongate",
        "mcp",
        "call",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--tool",
        "tile",
        "--args",
        '{"number": 3}',
        "--",
        sys.executable,
        "-m",
        "visiongate.adapters.mcp.example_server",
    )
    assert done.returncode == 0, done.stderr
    assert '"lane": "native"' in done.stdout


def test_pytest_on_the_bundled_policies_from_the_root(installed: Path) -> None:
    done = _run_from_root(installed, "-m", "pytest", "-q", "-p", "no:cacheprovider", "policies")
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout


def _imported_modules(file: Path, package: str) -> set[str]:
    """Absolute names of the modules `file` (in `package`) imports, relative imports resolved."""
    import ast

    tree = ast.parse(file.read_text(encoding="utf-8"))
    found: set[str] = set()
    base = package.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[: len(base) - node.level + 1]
                found.add(".".join(parent + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
    return found


def _package_of(file: Path) -> str:
    for folder, package in (("engine", "visiongate.engine"), ("adapters", "visiongate.adapters")):
        top = ROOT / folder
        if file.is_relative_to(top):
            parts = list(file.relative_to(top).parent.parts)
            return ".".join([package, *parts])
    raise ValueError(file)


def test_the_runtime_never_imports_the_tooling() -> None:
    runtime = [
        file
        for folder in ("engine", "adapters")
        for file in (ROOT / folder).rglob("*.py")
        if "tooling" not in file.relative_to(ROOT).parts
    ]
    assert runtime
    offenders = {
        str(file.relative_to(ROOT)): sorted(
            name
            for name in _imported_modules(file, _package_of(file))
            if name.startswith("visiongate.engine.tooling")
        )
        for file in runtime
    }
    assert {file: names for file, names in offenders.items() if names} == {}


def _engine_private_imports(file: Path) -> list[str]:
    """What `file` imports from the engine's private modules (`visiongate.engine._x`,
    `visiongate.engine.facts._y`, a private name of a public one), relative imports resolved."""
    import ast

    base = _package_of(file).split(".")
    found = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            pairs = [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(base[: len(base) - node.level + 1] + ([module] if module else []))
            pairs = [(module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in pairs:
            parts = [*module.split("."), *([name] if name else [])]
            if parts[:2] == ["visiongate", "engine"] and any(
                part.startswith("_") for part in parts[2:]
            ):
                found.append(".".join(parts))
    return found


def test_adapters_import_only_the_engines_public_names() -> None:
    """Regression: adapters imported `visiongate.engine._settings`, `facts._registry`,
    `facts._resolver` and `facts._registry_schema` in 15 places, names the public packages
    re-export. The engine's private modules are free to move; an adapter needing a name the
    engine does not export says so by exporting it."""
    files = sorted((ROOT / "adapters").rglob("*.py"))
    assert len(files) > 50
    offenders = {
        str(file.relative_to(ROOT)): names
        for file in files
        if (names := _engine_private_imports(file))
    }
    assert offenders == {}


def test_the_package_ships_no_attack_server() -> None:
    """The hostile and lying test servers lived in `adapters/mcp/` and shipped to every user;
    they are the tests' (`tests/_hostile_mcp.py`). The example server that stays has exactly
    the tools its docstring lists."""
    import asyncio
    import re

    from visiongate.adapters.mcp import example_server

    shipped = {path.stem for path in (ROOT / "adapters").rglob("*.py")}
    assert not shipped & {"_hostile", "_lying_images"}
    documented = re.findall(r"^\| `(\w+)` +\|", example_server.__doc__ or "", re.MULTILINE)
    tools = asyncio.run(example_server.build_server().list_tools())
    assert sorted(tool.name for tool in tools) == sorted(documented)
    assert {"screenshot", "gallery", "smuggle"} <= set(documented)


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    folders = [ROOT / "src" / "visiongate", ROOT / "engine", ROOT / "adapters"]
    crowded = {
        str(folder.relative_to(ROOT)): count
        for top in folders
        for folder in [top, *(path for path in top.rglob("*") if path.is_dir())]
        if (count := len(list(folder.glob("*.py")))) > 15
    }
    assert crowded == {}


def test_rule_pages_and_json_schemas_ship_in_the_package(installed: Path) -> None:
    """`visiongate rule CODE` works offline from an installed (not editable) package, and the
    JSON Schemas of the `--json` outputs are package data (issue 14)."""
    done = _run_from_root(installed, "-m", "visiongate", "rule", "gap")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# `gap`")
    code = (
        "import visiongate\n"
        "from visiongate._schemas import SCHEMA_VERSIONS, load_schema\n"
        "print(visiongate.__file__)\n"
        "print(sorted(load_schema(name)['$id'] for name in SCHEMA_VERSIONS)[0])\n"
    )
    done = _run_from_root(installed, "-c", code)
    assert done.returncode == 0, done.stderr
    location, first = done.stdout.split()
    assert Path(location).is_relative_to(installed)
    assert first == "urn:visiongate:schema:audit"  # the first of the sorted ids


def test_every_file_a_shipped_page_links_ships_beside_it(installed: Path) -> None:
    """The policy pages embed their grid as an SVG next to them: the wheel carries the pictures
    too, or the pages show broken images where the package is installed (issue 28)."""
    docs = installed / "visiongate" / "policy_docs"
    pages = sorted(docs.rglob("*.md"))
    linked = [
        (page, page.parent / target)
        for page in pages
        for target in re.findall(r"\]\(([^)#:]+\.(?:svg|png))\)", page.read_text())
    ]
    assert any(target.suffix == ".svg" for _, target in linked)  # the grids are linked
    missing = [
        f"{page.relative_to(docs)} -> {target.name}"
        for page, target in linked
        if not target.is_file()
    ]
    assert not missing


def test_the_playground_page_ships_in_the_package(installed: Path) -> None:
    """`visiongate playground` serves its page from the installed package (issue 39)."""
    code = (
        "from importlib import resources\n"
        "folder = resources.files('visiongate.playground') / 'static'\n"
        "print(' '.join(sorted(item.name for item in folder.iterdir())))\n"
    )
    done = _run_from_root(installed, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["index.html", "playground.css", "playground.js"]
