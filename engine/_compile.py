"""Compilation: durable-rules evaluates every rule over the whole input space, once.

The policy becomes a durable-rules JSON ruleset; the 54 cells are asserted as facts (facts,
not events: a fact fires *every* rule it matches, so overlaps are seen); each firing records
`(rule index, cell index)`. The hit policy is then applied in Python and the result frozen
into a table. durable-rules is never called on the decide path: it is not thread-safe, its
ruleset names are process-global and cannot be redefined, and a post costs ~14 µs.

We use `durable.engine.Ruleset` directly rather than a `Host`: a Host starts two timer
threads that never stop and call into the C engine concurrently (durable_rules #291/#292).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from durable.engine import MessageNotHandledException, Ruleset

from ._policy import Policy, Rule
from ._vocabulary import FACT_NAMES, FACTS, Cell, all_cells

# durable-rules keeps global C state; every call into it happens under this lock.
_ENGINE_LOCK = threading.Lock()
# Match sets by policy content hash: a ruleset name can be registered once per process, so a
# policy seen before (a reload of unchanged content) reuses its matches. Bounded.
_MATCH_CACHE: OrderedDict[str, Mapping[Cell, tuple[int, ...]]] = OrderedDict()
_MATCH_CACHE_SIZE = 64


class CompileError(RuntimeError):
    """durable-rules failed or disagreed with itself; never expected for a valid policy."""


@dataclass(frozen=True)
class CellVerdict:
    """What the policy says for one cell: the lane, the winning rule and every rule that matched."""

    lane: str
    rule: str | None
    reason: str
    matched: tuple[str, ...]

    @property
    def default_used(self) -> bool:
        return self.rule is None


def ruleset_name(policy: Policy) -> str:
    """A process-unique ruleset name derived from the policy content (and rule structure)."""
    return f"visiongate_{policy.sha256[:24]}"


def _rule_definition(rule: Rule, record: Any) -> dict[str, Any]:
    # Every fact carries `cell`; the always-true test keeps an empty `when` a valid condition.
    conjunction: list[dict[str, Any]] = [{"$gte": {"cell": 0}}]
    for fact in FACT_NAMES:
        if fact in rule.when:
            values = [value for value in FACTS[fact] if value in rule.when[fact]]
            conjunction.append({"$or": [{fact: value} for value in values]})
    return {"all": [{"m": {"$and": conjunction}}], "run": record}


def _recorder(index: int, fired: list[tuple[int, int]]) -> Any:
    # One positional parameter: durable-rules treats a two-parameter action as asynchronous.
    def run(closure: Any) -> None:
        fired.append((index, int(closure.m.cell)))

    return run


def _evaluate(policy: Policy) -> list[tuple[int, int]]:
    fired: list[tuple[int, int]] = []
    definition = {
        f"r{rule.index}": _rule_definition(rule, _recorder(rule.index, fired))
        for rule in policy.rules
    }
    if not definition:
        return fired
    ruleset = Ruleset(ruleset_name(policy), None, definition)
    facts = [dict(zip(FACT_NAMES, cell, strict=True), cell=i) for i, cell in enumerate(all_cells())]
    failure: list[BaseException] = []

    def complete(error: BaseException | None, _state: Any) -> None:
        if error is not None:
            failure.append(error)

    for fact in facts:
        # Asserted one by one: a batch with one unmatched fact (a gap) raises for the batch.
        try:
            handle = ruleset.assert_fact(fact)
        except MessageNotHandledException:
            continue
        ruleset.do_actions(handle, complete)
    state = ruleset.get_state("0")
    if failure or "exception" in state:
        # durable-rules swallows exceptions raised inside actions into the state.
        raise CompileError(f"durable-rules failed: {failure or state['exception']}")
    return fired


def match_cells(policy: Policy) -> Mapping[Cell, tuple[int, ...]]:
    """For every cell, the indexes (in rule order) of the rules whose `when` matches it."""
    with _ENGINE_LOCK:
        cached = _MATCH_CACHE.get(policy.sha256)
        if cached is not None:
            _MATCH_CACHE.move_to_end(policy.sha256)
            return cached
        fired = _evaluate(policy)
        cells = list(all_cells())
        by_cell: dict[Cell, list[int]] = {cell: [] for cell in cells}
        for rule_index, cell_index in fired:
            by_cell[cells[cell_index]].append(rule_index)
        matches = MappingProxyType(
            {cell: tuple(sorted(set(indexes))) for cell, indexes in by_cell.items()}
        )
        _MATCH_CACHE[policy.sha256] = matches
        if len(_MATCH_CACHE) > _MATCH_CACHE_SIZE:
            _MATCH_CACHE.popitem(last=False)
        return matches


def decide_cell(policy: Policy, matched: tuple[int, ...]) -> CellVerdict:
    """Apply the hit policy to the rules matching one cell (`unique` overlaps are load errors)."""
    names = tuple(policy.rules[index].id for index in matched)
    if not matched:
        reason = "no rule matches these facts; the policy's default lane applies (fail closed)"
        return CellVerdict(policy.default, None, reason, names)
    winner = policy.rules[matched[0]]
    return CellVerdict(winner.lane, winner.id, winner.reason, names)


def compile_table(policy: Policy) -> Mapping[Cell, CellVerdict]:
    """The frozen decision table: every cell to its verdict."""
    matches = match_cells(policy)
    return MappingProxyType({cell: decide_cell(policy, matches[cell]) for cell in all_cells()})
