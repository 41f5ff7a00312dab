"""Explanations computed from the compiled table: the whole grid, and one cell in detail."""

from __future__ import annotations

from typing import Any

from visiongate.kernel._display import visible

from .._load import CompiledPolicy
from .._policy import Rule, unmet_fact
from .._vocabulary import FACT_NAMES, FACTS, Cell, all_cells, cell_facts

SCHEMA_VERSION = 1
"""Of `explain --json` (`visiongate/schemas/explain.json`)."""


def policy_summary(compiled: CompiledPolicy) -> dict[str, Any]:
    """Which policy: name, version, content hash, file, hit policy and default lane."""
    policy = compiled.policy
    return {
        "name": policy.name,
        "version": policy.version,
        "sha256": policy.sha256,
        "path": policy.path,
        "hit_policy": policy.hit_policy,
        "default": policy.default,
    }


def table_document(compiled: CompiledPolicy) -> dict[str, Any]:
    """`explain --json`: the policy, then every cell."""
    return {
        "schema_version": SCHEMA_VERSION,
        "policy": policy_summary(compiled),
        "cells": table_records(compiled),
    }


def table_records(compiled: CompiledPolicy) -> list[dict[str, Any]]:
    """Every cell as `{facts..., lane, rule, matched}`."""
    return [
        {
            **cell_facts(cell),
            "lane": compiled.table[cell].lane,
            "rule": compiled.table[cell].rule,
            "matched": list(compiled.table[cell].matched),
        }
        for cell in all_cells()
    ]


def render_table(compiled: CompiledPolicy) -> str:
    """The whole grid as aligned text, with a header naming the policy."""
    policy = compiled.policy
    header = [*FACT_NAMES, "lane", "rule"]
    rows = [
        [*cell, compiled.table[cell].lane, compiled.table[cell].rule or "(default)"]
        for cell in all_cells()
    ]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        f"policy {policy.name} {policy.version} (hit_policy {policy.hit_policy}, "
        f"default {policy.default}, sha256 {policy.sha256[:12]})",
        "  ".join(title.ljust(width) for title, width in zip(header, widths, strict=True)),
    ]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in rows]
    native = sum(verdict.lane == "native" for verdict in compiled.table.values())
    lines.append(f"{native} cell(s) native, {len(rows) - native} text")
    return "\n".join(visible(line.rstrip()) for line in lines)


def first_failed_condition(rule: Rule, cell: Cell) -> str | None:
    """Why a rule does not match a cell (the first failing fact), or None if it matches."""
    fact = unmet_fact(rule.when, cell)
    if fact is None:
        return None
    wanted = "|".join(value for value in FACTS[fact] if value in rule.when[fact])
    return f"{fact} is `{cell[FACT_NAMES.index(fact)]}`, rule wants {wanted}"


def cell_explanation(compiled: CompiledPolicy, cell: Cell) -> list[dict[str, Any]]:
    """`explain_cell` as data: every rule, in order, with what it did for this cell."""
    verdict = compiled.table[cell]
    rows = []
    for rule in compiled.policy.rules:
        failed = first_failed_condition(rule, cell)
        if failed is not None:
            status = "no-match"
        else:
            status = "wins" if rule.id == verdict.rule else "matches"
        rows.append({"rule": rule.id, "lane": rule.lane, "status": status, "why_not": failed})
    return rows


def explain_cell(compiled: CompiledPolicy, cell: Cell) -> str:
    """Every rule, in order, and what it did for this cell (OPA's `--explain fails` view)."""
    policy = compiled.policy
    verdict = compiled.table[cell]
    lines = [f"rules of {policy.name} (hit_policy {policy.hit_policy}) for this cell:"]
    width = max((len(rule.id) for rule in policy.rules), default=0)
    for rule in policy.rules:
        failed = first_failed_condition(rule, cell)
        if failed is not None:
            status = f"no match: {failed}"
        elif rule.id == verdict.rule:
            status = f"WINS -> {rule.lane}"
        else:
            status = f"matches (-> {rule.lane}) but `{verdict.rule}` comes first"
        lines.append(f"  {rule.id:<{width}}  {status}")
    if verdict.rule is None:
        lines.append(f"  no rule matched: default lane `{policy.default}`")
    return "\n".join(visible(line) for line in lines)
