"""The floors of the house, read from the code (issue 38).

An import graph of every module of the package, built from their source: every import counts,
at module level, inside a function and under `TYPE_CHECKING` alike, since each is a place
where one module leans on another. Only a package's own facade re-exporting what lies below
it (`engine/__init__.py` naming `_gate.Gate`) is no dependency. On that graph: the kernel
imports nothing of visiongate's outside itself, the engine and the adapters never import the
command line, the MCP wire reader never imports the router or the client side above it, and
no two modules import each other, however indirectly. Each rule is also run on the graph
with one deliberate violation added, so that none of them can pass by reading nothing. And no
module is over 400 lines (STYLE.md), checked the same way.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOMES: Mapping[str, str] = {
    "src/visiongate": "visiongate",
    "engine": "visiongate.engine",
    "adapters": "visiongate.adapters",
}
"""Where each part of the import package `visiongate` lives in the checkout (pyproject.toml)."""

KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()
"""Circles not yet broken, each with why. A new circle fails the test, and so does a listed
circle that is gone (take it off the list)."""


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    package: bool
    """An `__init__.py`."""


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    where: str
    """`file:line` of the import."""


def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for folder, package in HOMES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join([package, *(parts[:-1] if is_package else parts)])
            found[name] = Module(name, path, is_package)
    return found


def imports(module: Module, source: str, known: Mapping[str, Module]) -> Iterator[Edge]:
    """Every import of visiongate's own modules in `source`, as the module `module`."""
    package = module.name if module.package else module.name.rpartition(".")[0]
    where = module.path.relative_to(ROOT) if module.path.is_relative_to(ROOT) else module.path
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.append(submodule if submodule in known else base)
        for target in targets:
            if target in known and target != module.name:
                yield Edge(module.name, target, f"{where}:{node.lineno}")


def graph(extra: Mapping[str, str] = {}) -> list[Edge]:
    """The edges of the tree, plus those of `extra` (module name -> source added to it)."""
    known = modules()
    edges = list(_tree_edges())
    for name, source in extra.items():
        edges += imports(known[name], source, known)
    return edges


@cache
def _tree_edges() -> tuple[Edge, ...]:
    known = modules()
    found = [
        edge
        for module in known.values()
        for edge in imports(module, module.path.read_text("utf-8"), known)
    ]
    return tuple(edge for edge in found if not _facade(edge, known))


def _facade(edge: Edge, known: Mapping[str, Module]) -> bool:
    """A package's `__init__` naming what lies inside it: its public names, not a floor."""
    return known[edge.importer].package and edge.imported.startswith(edge.importer + ".")


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


KERNEL = "visiongate.kernel"
CLI = "visiongate.cli"
WIRE = "visiongate.adapters.wire"
ABOVE_THE_WIRE = ("visiongate.adapters._router", "visiongate.adapters.mcp")

RULES: Mapping[str, Callable[[Edge], bool]] = {
    "the kernel imports nothing of visiongate's outside itself": lambda edge: (
        _inside(edge.importer, KERNEL) and not _inside(edge.imported, KERNEL)
    ),
    "the engine and the adapters never import the command line": lambda edge: (
        any(_inside(edge.importer, floor) for floor in ("visiongate.engine", "visiongate.adapters"))
        and _inside(edge.imported, CLI)
    ),
    "the wire reader never imports the router or the MCP client above it": lambda edge: (
        _inside(edge.importer, WIRE) and any(_inside(edge.imported, up) for up in ABOVE_THE_WIRE)
    ),
}  # fmt: skip


def broken(rule: str, edges: list[Edge]) -> list[str]:
    return [f"{e.where}: {e.importer} imports {e.imported}" for e in edges if RULES[rule](e)]


def circles(edges: list[Edge]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    following: dict[str, set[str]] = {}
    for edge in edges:
        following.setdefault(edge.importer, set()).add(edge.imported)
        following.setdefault(edge.imported, set())
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(name: str) -> None:  # the tree is shallow: recursion is fine
        order[name] = low[name] = len(order)
        stack.append(name)
        for other in following[name]:
            if other not in order:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], order[other])
        if low[name] == order[name]:
            component = {stack.pop()}
            while name not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.add(frozenset(component))

    for name in following:
        if name not in order:
            visit(name)
    return found


def test_the_graph_reads_the_whole_tree() -> None:
    edges = graph()
    importers = {edge.importer for edge in edges}
    assert len(modules()) > 250 and len(edges) > 1000
    assert {"visiongate.engine._gate", "visiongate.adapters._router", "visiongate.cli"} <= importers
    lazy = Edge("visiongate.adapters.gateway._gateway", "visiongate.adapters.vision._config", "")
    assert any((e.importer, e.imported) == (lazy.importer, lazy.imported) for e in edges)


@pytest.mark.parametrize("rule", RULES)
def test_no_import_runs_back_up(rule: str) -> None:
    assert broken(rule, graph()) == []


VIOLATIONS = {
    "the kernel imports nothing of visiongate's outside itself": (
        "visiongate.kernel._errors", "from visiongate.engine import Gate\n"
    ),
    "the engine and the adapters never import the command line": (
        "visiongate.engine._gate", "def f():\n    from visiongate.cli import main\n"
    ),
    "the wire reader never imports the router or the MCP client above it": (
        "visiongate.adapters.wire._edge", "from .._router import Router\n"
    ),
}  # fmt: skip


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_fails_on_a_deliberate_violation(rule: str) -> None:
    module, source = VIOLATIONS[rule]
    [found] = broken(rule, graph({module: source}))
    assert module in found and found.startswith(str(modules()[module].path.relative_to(ROOT)))


def test_no_two_modules_import_each_other() -> None:
    assert circles(graph()) == KNOWN_CIRCLES


def test_a_deliberate_circle_is_found() -> None:
    # `_watch` took `ReloadResult` from `_gate`, which imports `_watch`: one of the six.
    back = {"visiongate.engine._watch": "if TYPE_CHECKING:\n    from ._gate import Gate\n"}
    found = circles(graph(back)) - KNOWN_CIRCLES
    assert found == {frozenset({"visiongate.engine._gate", "visiongate.engine._watch"})}


DIFFLIB_USES = {
    "visiongate.kernel._suggest": "did-you-mean: the one home of suggestions",
    "visiongate.cli.policy.fmt": "`fmt --diff` prints a unified diff",
    "visiongate.adapters.vision._changes": "what changed between two screens' text",
}
"""The modules that may import difflib, and what for: a suggestion anywhere else goes
through `kernel._suggest` (`closest`, `did_you_mean`, `similarity`)."""


def test_suggestions_have_one_home() -> None:
    users = {
        name
        for name, module in modules().items()
        for node in ast.walk(ast.parse(module.path.read_text("utf-8")))
        if (isinstance(node, ast.Import) and any(a.name == "difflib" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and node.module == "difflib")
    }
    assert users == DIFFLIB_USES.keys()


MAX_MODULE_LINES = 400
"""STYLE.md's bound for a module. Every module of the tree is written by hand (the generated
Unicode table is a data file, `sanitize/_invisible_data.json`), so none is exempt."""


def oversized(sources: Mapping[str, str]) -> dict[str, int]:
    """The modules over `MAX_MODULE_LINES`, with their line counts."""
    return {
        name: count
        for name, source in sources.items()
        if (count := len(source.splitlines())) > MAX_MODULE_LINES
    }


def _sources() -> dict[str, str]:
    return {name: module.path.read_text("utf-8") for name, module in modules().items()}


def test_no_module_is_over_four_hundred_lines() -> None:
    assert oversized(_sources()) == {}


def test_a_module_over_four_hundred_lines_is_found() -> None:
    sources = _sources()
    grown = sources["visiongate.engine._gate"] + "pass\n" * MAX_MODULE_LINES
    assert oversized({**sources, "visiongate.engine._gate": grown}) == {
        "visiongate.engine._gate": len(grown.splitlines())
    }
