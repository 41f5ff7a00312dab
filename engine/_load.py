"""Loading a policy: named stages that collect diagnostics (OPA's compiler stage list).

load YAML -> schema -> build model -> compile table -> load-time checks. A stage runs only
if the stages before it found no error, since its input would be meaningless.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from visiongate.kernel._files import check_regular
from visiongate.kernel._lazy import lazy_logger

from ._compile import CellVerdict, compile_table, match_cells
from ._compile_cache import recall, remember
from ._diagnostics import Diagnostic, Location, PolicyError, has_errors
from ._files import bundled_data
from ._policy import Policy, build_policy, condition_matches
from ._vocabulary import Cell, all_cells, format_cell
from ._yaml import read_source_file
from ._yaml._staged import Staged, run_stages, stage_yaml

DEFAULT_POLICY = "default"
logger = lazy_logger("visiongate")  # `logging` only if something goes wrong (issue 37)


@dataclass(frozen=True, eq=False)
class CompiledPolicy:
    """A policy with its frozen decision table and its match sets."""

    policy: Policy
    table: Mapping[Cell, CellVerdict]
    matches: Mapping[Cell, tuple[int, ...]]
    diagnostics: tuple[Diagnostic, ...] = ()
    """Non-error diagnostics found while loading."""


class _Context(Staged):
    document: dict[str, object] | None = None
    policy: Policy | None = None
    compiled: CompiledPolicy | None = None


def _stage_schema(context: _Context) -> None:
    # Imported here: cerberus is slow to import, and a policy recalled from the compile cache
    # needs no validation (a command line that only decides or lints never imports it).
    from ._policy_schema import POLICY_SCHEMA, refine_policy_diagnostic
    from ._validate import validate

    assert context.loaded is not None
    document, found = validate(context.loaded, POLICY_SCHEMA, refine_policy_diagnostic)
    context.document = document
    context.diagnostics.extend(found)


def _stage_build(context: _Context) -> None:
    assert context.loaded is not None and context.document is not None
    context.policy = build_policy(context.document, context.loaded)
    context.diagnostics.extend(context.policy.warnings)
    context.diagnostics.extend(_duplicate_ids(context.policy))


def _stage_compile(context: _Context) -> None:
    assert context.policy is not None
    matches = match_cells(context.policy)
    table = compile_table(context.policy, matches)
    context.compiled = CompiledPolicy(context.policy, table, matches)
    context.diagnostics.extend(_unique_overlaps(context.compiled))
    context.diagnostics.extend(invariant_violations(context.compiled))


STAGES: tuple[tuple[str, Callable[[_Context], None]], ...] = (
    ("load_yaml", stage_yaml),
    ("schema", _stage_schema),
    ("build", _stage_build),
    ("compile", _stage_compile),
)


def analyze_policy_text(
    text: str, file: str = "<policy>"
) -> tuple[CompiledPolicy | None, list[Diagnostic]]:
    """Run every stage that can run; never raises for bad input (the linter's entry point).

    A policy that compiled before, with the same content and engine, is recalled from the
    compile cache (`_compile_cache`) instead."""
    recalled = _recalled(text, file)
    if recalled is not None:
        return recalled
    context = run_stages(_Context(text, file), STAGES)
    if context.compiled is not None and not has_errors(context.diagnostics):
        compiled = context.compiled
        remember(text, context.loaded, context.document, compiled.matches, context.diagnostics)
    return context.compiled, context.diagnostics


def _recalled(text: str, file: str) -> tuple[CompiledPolicy, list[Diagnostic]] | None:
    """The compiled policy rebuilt from a cache entry (see `_compile_cache`), or None."""
    entry = recall(text)
    if entry is None:
        return None
    try:
        loaded = entry.loaded(text, file)  # the YAML as parsed when the entry was written
        policy = build_policy(entry.document, loaded)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        logger.debug("visiongate: compile cache entry ignored: %s", error)
        return None
    matches = entry.checked_matches(policy)
    if matches is None:
        return None
    table = compile_table(policy, matches)  # the hit policy over the given match sets only
    diagnostics = [replace(d, location=replace(d.location, file=file)) for d in entry.diagnostics]
    return CompiledPolicy(policy, table, matches), diagnostics


def compile_policy_text(text: str, file: str = "<policy>") -> CompiledPolicy:
    """Load, validate and compile a policy; raise `PolicyError` with every diagnostic."""
    compiled, diagnostics = analyze_policy_text(text, file)
    if compiled is None or has_errors(diagnostics):
        raise PolicyError(diagnostics)
    return CompiledPolicy(compiled.policy, compiled.table, compiled.matches, tuple(diagnostics))


def read_policy_source(policy: str | Path | None) -> tuple[str, str]:
    """(text, file name) of a policy given as a path, a bundled name, or None (the default)."""
    if policy is None or (isinstance(policy, str) and is_bundled_policy(policy)):
        name = DEFAULT_POLICY if policy is None else str(policy)
        return bundled_policy_text(name), f"policies/{_bundled_file(name)}"
    return read_source_file(policy, kind="policy"), str(policy)


def refuse_irregular(source: str | Path | None) -> None:
    """`PolicyError` for a policy path that exists and is not a regular file (reading a FIFO
    would wait for a writer forever, a device would never end)."""
    path = policy_path(source)
    try:
        if path is None or not path.exists():
            return  # bundled, or missing: the reader says so in its own words
        check_regular(os.stat(path), path)
    except OSError as error:
        raise PolicyError(
            [
                Diagnostic(
                    "unreadable-file",
                    "error",
                    f"cannot read the policy `{source}`: {error.strerror}",
                    Location(str(source)),
                    help="point `--policy` at a policy file (YAML), not a pipe or a device",
                )
            ]
        ) from None


def policy_path(source: str | Path | None) -> Path | None:
    """The policy file `source` names; None for a bundled policy (by name, or the default)."""
    if source is None or (isinstance(source, str) and is_bundled_policy(source)):
        return None
    return Path(source)


def load_policy(policy: str | Path | None = None) -> CompiledPolicy:
    """Load a policy file (or a bundled policy by name; None for the default)."""
    text, file = read_policy_source(policy)
    return compile_policy_text(text, file)


def _bundled_file(name: str) -> str:
    return f"{name}.yaml"


def bundled_policy_names() -> list[str]:
    """Names of the policies shipped with the package: `default` and `examples/<name>`."""
    root = bundled_data()
    names = [
        item.name.removesuffix(".yaml")
        for item in root.iterdir()
        if item.name.endswith(".yaml")
        and item.name != "providers.yaml"
        and not item.name.endswith(".test.yaml")
    ]
    examples = root / "examples"
    names += [
        f"examples/{item.name.removesuffix('.yaml')}"
        for item in examples.iterdir()
        if item.name.endswith(".yaml") and not item.name.endswith(".test.yaml")
    ]
    return sorted(names)


def is_bundled_policy(name: str) -> bool:
    return not name.endswith((".yaml", ".yml")) and name in bundled_policy_names()


def bundled_policy_text(name: str) -> str:
    return bundled_data(_bundled_file(name)).read_text("utf-8")


def _duplicate_ids(policy: Policy) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for kind, items in (("rule", policy.rules), ("invariant", policy.invariants)):
        seen: dict[str, int] = {}
        for item in items:
            if item.id in seen:
                found.append(
                    Diagnostic(
                        f"duplicate-{kind}-id",
                        "error",
                        f"{kind} id `{item.id}` is used twice (first at line {seen[item.id]})",
                        item.location,
                        help=f"give every {kind} a unique id; traces name rules by id",
                    )
                )
            seen.setdefault(item.id, item.location.line)
    return found


# Overlaps listed at most; a policy of many copies of one rule would otherwise list every pair.
MAX_OVERLAPS = 50


def _unique_overlaps(compiled: CompiledPolicy) -> list[Diagnostic]:
    policy = compiled.policy
    if policy.hit_policy != "unique":
        return []
    pairs, more = _overlapping_pairs(compiled.matches)
    found = [
        Diagnostic(
            "overlap",
            "error",
            f"rules `{policy.rules[a].id}` and `{policy.rules[b].id}` both match "
            f"{len(cells)} cell(s) under `hit_policy: unique`",
            policy.rules[b].location,
            cells=tuple(cells),
            rule=policy.rules[b].id,
            help="narrow one rule's `when`, or use `hit_policy: first` to let rule order decide",
        )
        for (a, b), cells in sorted(pairs.items())
    ]
    if more:
        found.append(
            Diagnostic(
                "overlap",
                "error",
                f"more pairs of rules overlap than the {MAX_OVERLAPS} listed",
                policy.source.location(("rules",), key=True),
                help="fix the pairs listed first, then lint again",
            )
        )
    return found


def _overlapping_pairs(
    matches: Mapping[Cell, tuple[int, ...]],
) -> tuple[dict[tuple[int, int], list[str]], bool]:
    """Up to `MAX_OVERLAPS` pairs of rules matching a common cell, each with all its cells, and
    whether more pairs overlap than that.

    Pairs are found in cell order and stop at the bound, then each pair's cells are
    collected: linear in cells x bound, where listing every pair would be quadratic."""
    pairs: dict[tuple[int, int], list[str]] = {}
    more = False
    for matched in matches.values():
        for position, first in enumerate(matched):
            for second in matched[position + 1 :]:
                if (first, second) in pairs:
                    continue
                if len(pairs) >= MAX_OVERLAPS:
                    more = True
                    break
                pairs[(first, second)] = []
    for cell, matched in matches.items():
        present = set(matched)
        for (first, second), cells in pairs.items():
            if first in present and second in present:
                cells.append(format_cell(cell))
    return pairs, more


def invariant_violations(compiled: CompiledPolicy) -> list[Diagnostic]:
    """Every invariant checked over every cell it selects, with the counterexample cells."""
    found: list[Diagnostic] = []
    for invariant in compiled.policy.invariants:
        bad = [
            cell
            for cell in all_cells()
            if condition_matches(invariant.when, cell)
            and compiled.table[cell].lane != invariant.expect
        ]
        if bad:
            winners = sorted({compiled.table[cell].rule or "(default)" for cell in bad})
            found.append(
                Diagnostic(
                    "invariant-violated",
                    "error",
                    f"invariant `{invariant.id}` expects lane `{invariant.expect}` but "
                    f"{len(bad)} cell(s) get another lane (decided by {', '.join(winners)})",
                    invariant.location,
                    cells=tuple(format_cell(cell) for cell in bad),
                    rule=invariant.id,
                    help="change the rules that decide these cells, or the invariant",
                )
            )
    return found
