"""Every code any command can emit has a rule page (issue 28): the emitters are found in the
source, not listed by hand, so a new `Diagnostic("some-code", ...)` without a page fails here.

The scan follows every call that reaches `Diagnostic(code, ...)` (or `replace(diagnostic,
code=...)`): a function that passes its own `code` parameter on is an emitter too
(`self.warn("invalid-mode", ...)`, `report("unknown-config-key", ...)`), to a fixed point.
A code that is not written as a literal at the call must be expanded in `COMPUTED` below, or
the test fails.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli_helpers import ROOT, run

from visiongate.engine.tooling.lint._codes import LINT_CODES

SOURCES = [ROOT / "engine", ROOT / "adapters", ROOT / "src" / "visiongate"]
COMPUTED = {
    # The source text of the code argument -> the codes it can take.
    "f'duplicate-{kind}-id'": ("duplicate-rule-id", "duplicate-invariant-id"),
    "str(item['code'])": (),  # a diagnostic stored in the compile cache, emitted before
}


def _callee(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _code_argument(call: ast.Call, position: int) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == "code"), None)


def _functions(trees: dict[Path, ast.Module]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node


def _emitters(trees: dict[Path, ast.Module]) -> dict[str, int]:
    """Function name -> position of its `code` argument, for every function that hands its
    `code` parameter on to `Diagnostic` (directly or through another emitter)."""
    emitters = {"Diagnostic": 0, "replace": 99}  # `dataclasses.replace(d, code="x")`
    # Only a function with a `code` parameter can hand it on: found once, with its calls.
    candidates = [
        (function, [a.arg for a in function.args.args], _calls_in(function))
        for function in _functions(trees)
        if "code" in [a.arg for a in function.args.args]
    ]
    grown = True
    while grown:
        grown = False
        for function, params, calls in candidates:
            if function.name in emitters:
                continue
            for call in calls:
                name = _callee(call) if isinstance(call, ast.Call) else None
                if name not in emitters:
                    continue
                assert isinstance(call, ast.Call)
                argument = _code_argument(call, emitters[name])
                if isinstance(argument, ast.Name) and argument.id == "code":
                    offset = 1 if params[0] in ("self", "cls") else 0
                    emitters[function.name] = params.index("code") - offset
                    grown = True
                    break
    return emitters


def _calls_in(function: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(function) if isinstance(node, ast.Call)]


def _assigned(function: ast.AST, name: str) -> list[ast.expr]:
    """The values assigned to `name` in `function` (`code = "x"`, `message, code = "m", "x"`)."""
    values: list[ast.expr] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == name:
                values.append(node.value)
            elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                for element, value in zip(target.elts, node.value.elts, strict=False):
                    if isinstance(element, ast.Name) and element.id == name:
                        values.append(value)
    return values


def _codes_of(argument: ast.expr, function: ast.AST | None, where: str) -> tuple[str, ...]:
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return (argument.value,)
    if isinstance(argument, ast.Tuple | ast.List):
        return ()  # a document path given to a same-named helper, never a code
    if isinstance(argument, ast.IfExp):
        return _codes_of(argument.body, function, where) + _codes_of(
            argument.orelse, function, where
        )
    if isinstance(argument, ast.Name) and function is not None:
        values = _assigned(function, argument.id)
        if values:
            return tuple(c for value in values for c in _codes_of(value, function, where))
        args = getattr(function, "args", None)
        if args is not None and argument.id in [a.arg for a in args.args]:
            return ()  # a parameter: its callers are emitters, scanned on their own
    text = ast.unparse(argument)
    assert text in COMPUTED, f"{where}: a computed code `{text}`: expand it in COMPUTED"
    return COMPUTED[text]


@functools.cache
def emitted_codes() -> dict[str, str]:
    """Every code a call in the package can give `Diagnostic`, with one place it is given.

    Scanned when a test first asks, not at collection: parsing the whole package costs
    seconds, and under xdist every worker collects every module."""
    files = [path for root in SOURCES for path in sorted(root.rglob("*.py"))]
    trees = {path: ast.parse(path.read_text(), str(path)) for path in files}
    emitters = _emitters(trees)
    found: dict[str, str] = {}
    for path, tree in trees.items():
        for call, function in _calls(tree):
            name = _callee(call)
            if name not in emitters:
                continue
            argument = _code_argument(call, emitters[name])
            if argument is None or (
                isinstance(argument, ast.Constant) and not _is_code(argument.value)
            ):
                continue  # another function of the same name (`text(x, y, "label")`)
            if isinstance(argument, ast.Tuple | ast.BinOp | ast.Call) and name != "Diagnostic":
                continue  # likewise: a same-named helper that takes no code here
            where = f"{path.relative_to(ROOT)}:{call.lineno}"
            for code in _codes_of(argument, function, where):
                found.setdefault(code, where)
    return found


def _calls(
    tree: ast.AST, function: ast.AST | None = None
) -> Iterator[tuple[ast.Call, ast.AST | None]]:
    """Every call in `tree`, with the function it is written in (None at module level)."""
    for child in ast.iter_child_nodes(tree):
        inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
        if isinstance(child, ast.Call):
            yield child, function
        yield from _calls(child, inner)


def _is_code(value: object) -> bool:
    return isinstance(value, str) and value.replace("-", "").isalpha() and value.islower()


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_the_scan_finds_the_emitters_of_every_kind_of_file() -> None:
    # One code per emitter kind, so a scan that stopped following calls would fail here.
    for code in ("gap", "invalid-mode", "unknown-config-key", "literal-api-key",
                 "duplicate-rule-id", "conflict", "unknown-api", "catalog-shape",
                 "bad-project-config", "invariant-dropped", "missing-key"):  # fmt: skip
        assert code in emitted_codes(), code


def test_the_catalog_lists_exactly_the_codes_emitted() -> None:
    assert sorted(LINT_CODES) == sorted(emitted_codes())


# One case per code of the catalog, which the test above holds equal to the codes emitted.
@pytest.mark.parametrize("code", sorted(LINT_CODES))
def test_every_emitted_code_has_a_catalog_entry_and_a_page(
    code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    emitted = emitted_codes()
    assert code in emitted, f"`{code}` has a catalog entry but nothing emits it"
    status, out, err = run(capsys, "rule", code, "--json")
    assert status == 0, err
    assert json.loads(out)["page"].startswith(f"# `{code}`\n")


def test_sarif_names_a_page_for_every_finding_of_lint_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "agent: {image_input_mode: natve}\nvision: {embed_taget_bytes: 1}\n"
        "auxiliary: {vision: {provider: openrouter, api_key: sk-0123}}\n"
    )
    url = "https://example.com/policy_docs/lint"
    _code, out, _err = run(
        capsys, "lint", "--config", str(config), "--format", "sarif", "--docs-url", url
    )
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert {rule["id"] for rule in rules} == {
        "invalid-mode",
        "unknown-config-key",
        "literal-api-key",
        "invalid-vision-setting",  # no `model`, which openrouter needs
    }
    for rule in rules:
        assert rule["helpUri"] == f"{url}/{rule['id']}.md"
        assert (ROOT / "policy_docs" / "lint" / f"{rule['id']}.md").is_file()
        assert rule["shortDescription"]["text"] == LINT_CODES[rule["id"]].summary
