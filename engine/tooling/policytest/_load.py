"""Policy tests as data: the `*.test.yaml` format.

A test file names a policy and holds cases. A case gives the facts (all four: one cell;
fewer, or lists of values: every cell they select), or an agent config plus a provider and a
model (the facts are then resolved as in production). It expects a lane, and optionally the
deciding rule (`null`: the default) and, for resolved cases, the facts. Like Cedar's
`run-tests`, a test can assert *why*, not only *what*.

```yaml
visiongate: policy-test             # declares the format (the pytest plugin looks for it)
policy: default.yaml                # a path relative to this file, or a bundled name
coverage: {rules: 100, cells: 100}  # optional minimums, checked for this file's cases
cases:
  - facts: mode=auto,catalog=vision,aux=unset,path=accepts
    expect: {lane: native, rule: auto-vision-model}
  - name: gpt-4o through openai
    config: {agent: {image_input_mode: auto}}
    provider: openai
    model: gpt-4o
    expect: {lane: native, facts: {catalog: vision, path: accepts}}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from visiongate.kernel._files import read_regular_file

from ..._diagnostics import Diagnostic, Location
from ..._load import is_bundled_policy
from ..._policy_schema import _when_schema
from ..._validate import validate
from ..._vocabulary import FACT_NAMES, FACTS, LANES, Cell, all_cells
from ..._yaml import DEFAULT_LIMITS, LoadedYaml, load_yaml

Selection = Mapping[str, frozenset[str]]


def parse_facts_text(value: Any) -> Any:
    """`mode=auto catalog=vision|unknown` (or comma separated) as a mapping of lists.

    Anything that is not such a string is returned unchanged for the schema to judge.
    """
    if not isinstance(value, str):
        return value
    pairs = value.replace(",", " ").split()
    if not pairs or not all("=" in pair for pair in pairs):
        return value
    return {name: item.split("|") for name, _, item in (pair.partition("=") for pair in pairs)}


def _percent() -> dict[str, Any]:
    return {"type": "number", "min": 0, "max": 100}


def _facts_schema(coerce: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "dict", "schema": _when_schema()}
    if coerce:
        schema["coerce"] = parse_facts_text
    return schema


_RESOLVE_KEYS: dict[str, Any] = {
    "config": {"type": ["dict", "string"]},
    "catalog": {"type": "string", "empty": False},
    "registry": {"type": "string", "empty": False},
}

CASE_SCHEMA: dict[str, Any] = {
    "name": {"type": "string", "empty": False},
    "facts": _facts_schema(coerce=True),
    **_RESOLVE_KEYS,
    "provider": {"type": "string", "empty": False},
    "model": {"type": "string", "empty": False},
    "expect": {
        "type": "dict",
        "required": True,
        "schema": {
            "lane": {"type": "string", "required": True, "allowed": list(LANES)},
            "rule": {"type": "string", "nullable": True},
            "facts": _facts_schema(coerce=False),
        },
    },
}

TEST_FILE_SCHEMA: dict[str, Any] = {
    "visiongate": {"type": "string", "allowed": ["policy-test"]},
    "policy": {"type": "string", "required": True, "empty": False},
    "description": {"type": "string"},
    "coverage": {"type": "dict", "schema": {"rules": _percent(), "cells": _percent()}},
    **_RESOLVE_KEYS,
    "cases": {
        "type": "list",
        "required": True,
        "empty": False,
        "schema": {"type": "dict", "schema": CASE_SCHEMA},
    },
}


@dataclass(frozen=True)
class Case:
    """One test case, validated."""

    name: str
    location: Location
    expect_lane: str
    facts: Selection | None = None
    provider: str | None = None
    model: str | None = None
    config: Mapping[str, Any] | Path | None = None
    catalog: Path | None = None
    registry: Path | None = None
    expect_rule: str | None = None
    checks_rule: bool = False
    expect_facts: Mapping[str, str] = field(default_factory=dict)

    def cells(self) -> list[Cell]:
        """The cells a facts case selects (every cell matching the given values)."""
        selection = self.facts or {}
        return [
            cell
            for cell in all_cells()
            if all(
                value in selection.get(name, FACTS[name])
                for name, value in zip(FACT_NAMES, cell, strict=True)
            )
        ]


@dataclass(frozen=True)
class TestFile:
    """A parsed `*.test.yaml`: the policy it names, its cases and any problems found."""

    __test__ = False  # not a pytest class, despite the name

    path: Path
    shown: str
    policy: str | Path | None
    cases: tuple[Case, ...] = ()
    min_rules: float | None = None
    min_cells: float | None = None
    diagnostics: tuple[Diagnostic, ...] = ()


def _relative(base: Path, value: str) -> Path:
    path = Path(value)
    return path if path.is_absolute() else base / path


def _policy_reference(base: Path, value: str) -> str | Path:
    """A path relative to the test file when it names a file; else a bundled policy name."""
    candidate = _relative(base, value)
    if value.endswith((".yaml", ".yml")) or candidate.exists() or not is_bundled_policy(value):
        return candidate
    return value


def _case_name(raw: Mapping[str, Any], index: int) -> str:
    if raw.get("name"):
        return str(raw["name"])
    if "facts" in raw:
        facts = raw["facts"]
        return (
            ",".join(f"{n}={'|'.join(facts[n])}" for n in FACT_NAMES if n in facts) or "all cells"
        )
    if "provider" in raw:
        return f"{raw['provider']}/{raw.get('model', '?')}"
    return f"case {index + 1}"


def _shape_problem(raw: Mapping[str, Any], index: int, loaded: LoadedYaml) -> Diagnostic | None:
    """A case gives either `facts`, or both a `provider` and a `model`."""
    path: tuple[str | int, ...] = ("cases", index)
    resolved = [key for key in ("provider", "model") if key in raw]
    if "facts" in raw and resolved:
        message, code = (
            "a case gives `facts` or a `provider` and `model`, not both",
            "invalid-value",
        )
    elif "facts" not in raw and not resolved:
        message, code = "a case needs `facts`, or a `provider` and a `model`", "missing-key"
    elif len(resolved) == 1:
        missing = "model" if resolved == ["provider"] else "provider"
        message, code, path = f"missing required key `{missing}`", "missing-key", (*path, missing)
    else:
        return None
    return Diagnostic(code, "error", message, loaded.location(path[:2]), path)


def _expanded_unique_names(cases: list[Case]) -> list[Case]:
    seen: dict[str, int] = {}
    renamed = []
    for case in cases:
        count = seen.get(case.name, 0) + 1
        seen[case.name] = count
        if count > 1:
            case = replace(case, name=f"{case.name} #{count}")
        renamed.append(case)
    return renamed


def _build_case(
    raw: Mapping[str, Any], index: int, base: Path, defaults: Mapping[str, Any], loaded: LoadedYaml
) -> Case:
    expect = raw["expect"]
    merged = {key: raw.get(key, defaults.get(key)) for key in ("config", "catalog", "registry")}
    config = merged["config"]
    facts = raw.get("facts")
    return Case(
        name=_case_name(raw, index),
        location=loaded.location(("cases", index)),
        expect_lane=expect["lane"],
        facts={n: frozenset(v) for n, v in facts.items()} if facts is not None else None,
        provider=raw.get("provider"),
        model=raw.get("model"),
        config=_relative(base, config) if isinstance(config, str) else config,
        catalog=_relative(base, merged["catalog"]) if merged["catalog"] else None,
        registry=_relative(base, merged["registry"]) if merged["registry"] else None,
        expect_rule=expect.get("rule"),
        checks_rule="rule" in expect,
        expect_facts={n: next(iter(v)) for n, v in expect.get("facts", {}).items()},
    )


def parse_test_text(text: str, path: Path, shown: str) -> TestFile:
    """Parse and validate a test file; problems become diagnostics, never exceptions."""
    loaded = load_yaml(text, shown)
    if loaded.diagnostics or loaded.data is None:
        return TestFile(path, shown, None, diagnostics=loaded.diagnostics)
    document, found = validate(loaded, TEST_FILE_SCHEMA)
    if document is None:
        return TestFile(path, shown, None, diagnostics=tuple(found))
    shapes = [_shape_problem(raw, i, loaded) for i, raw in enumerate(document["cases"])]
    problems = [p for p in shapes if p is not None]
    for index, raw in enumerate(document["cases"]):
        problems += _expected_facts_problems(raw, index, loaded)
    if problems:
        return TestFile(path, shown, None, diagnostics=tuple(problems))
    base = path.parent
    cases = [_build_case(raw, i, base, document, loaded) for i, raw in enumerate(document["cases"])]
    coverage = document.get("coverage", {})
    return TestFile(
        path,
        shown,
        _policy_reference(base, document["policy"]),
        tuple(_expanded_unique_names(cases)),
        coverage.get("rules"),
        coverage.get("cells"),
    )


def _expected_facts_problems(
    raw: Mapping[str, Any], index: int, loaded: LoadedYaml
) -> list[Diagnostic]:
    facts = raw["expect"].get("facts", {})
    path = ("cases", index, "expect", "facts")
    problems = []
    if facts and "facts" in raw:
        problems.append(
            Diagnostic(
                "invalid-value",
                "error",
                "`expect.facts` only applies to provider and model cases",
                loaded.location(path),
                path,
            )
        )
    for name, values in facts.items():
        if len(values) != 1:
            problems.append(
                Diagnostic(
                    "invalid-value",
                    "error",
                    f"`expect.facts.{name}` must be one value",
                    loaded.location((*path, name)),
                    (*path, name),
                )
            )
    return problems


def load_test_file(path: str | Path, shown: str | None = None) -> TestFile:
    """Read and parse one test file (an unreadable file gives an `unreadable-file` diagnostic)."""
    path = Path(path)
    shown = shown or path.as_posix()
    try:
        text = read_regular_file(path, DEFAULT_LIMITS.max_bytes).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        problem = Diagnostic(
            "unreadable-file", "error", f"cannot read `{shown}`: {reason}", Location(shown)
        )
        return TestFile(path, shown, None, diagnostics=(problem,))
    return parse_test_text(text, path, shown)
