"""Semantic checks of the decision table, exact over every cell of the space.

What DMN verifiers (Drools, dmn-check) and Cedar's analyzer approximate symbolically is
plain set arithmetic here. The compiled match sets are the truth: no check re-evaluates a
`when`; a "what if" (a rule removed, an entry dropped, two rules merged) is answered by
editing match sets and applying the hit policy with the compiler's own `decide_cell`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..._compile import decide_cell
from ..._diagnostics import Diagnostic
from ..._load import CompiledPolicy
from ..._policy import Policy, Rule
from ..._vocabulary import FACT_NAMES, FACTS, Cell, all_cells, format_cell

CellSet = frozenset[Cell]


@dataclass(frozen=True, eq=False)
class TableView:
    """A compiled policy seen rule by rule: which cells each rule matches and wins."""

    compiled: CompiledPolicy
    matched_by: tuple[CellSet, ...]
    won_by: tuple[CellSet, ...]

    @classmethod
    def of(cls, compiled: CompiledPolicy) -> TableView:
        count = len(compiled.policy.rules)
        matched: list[set[Cell]] = [set() for _ in range(count)]
        won: list[set[Cell]] = [set() for _ in range(count)]
        winners = {rule.id: rule.index for rule in compiled.policy.rules}
        for cell in all_cells():
            for index in compiled.matches[cell]:
                matched[index].add(cell)
            winner = compiled.table[cell].rule
            if winner is not None:
                won[winners[winner]].add(cell)
        return cls(compiled, tuple(frozenset(s) for s in matched), tuple(frozenset(s) for s in won))

    @property
    def policy(self) -> Policy:
        return self.compiled.policy

    @property
    def first(self) -> bool:
        return self.policy.hit_policy == "first"

    def lane_with(self, cell: Cell, matched: Iterable[int]) -> str:
        """The lane of `cell` if exactly the rules `matched` matched it."""
        return decide_cell(self.policy, tuple(sorted(set(matched)))).lane

    def twin_of(self, rule: Rule) -> Rule | None:
        """The first earlier rule matching exactly the same cells, if any."""
        cells = self.matched_by[rule.index]
        return next(
            (r for r in self.policy.rules[: rule.index] if self.matched_by[r.index] == cells), None
        )


def cells_text(cells: Iterable[Cell]) -> tuple[str, ...]:
    """Cells in the stable order of the input space, as `mode=..,catalog=..,...`."""
    chosen = set(cells)
    return tuple(format_cell(cell) for cell in all_cells() if cell in chosen)


def ids(rules: Iterable[Rule]) -> str:
    return ", ".join(f"`{rule.id}`" for rule in rules)


def gaps(view: TableView) -> list[Diagnostic]:
    policy = view.policy
    open_cells = [cell for cell in all_cells() if not view.compiled.matches[cell]]
    if not open_cells:
        return []
    return [
        Diagnostic(
            "gap",
            "warning",
            f"{len(open_cells)} cell(s) match no rule and fall back to the default lane "
            f"`{policy.default}`",
            policy.source.location(("default",), key=True),
            ("default",),
            help="add rules for these cells so every decision names the rule that made it",
            cells=cells_text(open_cells),
        )
    ]


def duplicates_and_conflicts(view: TableView) -> list[Diagnostic]:
    found = []
    for rule in view.policy.rules:
        twin = view.twin_of(rule)
        if twin is None:
            continue
        same = twin.lane == rule.lane
        lanes = f"the same lane `{rule.lane}`" if same else f"lane `{twin.lane}`, not `{rule.lane}`"
        found.append(
            Diagnostic(
                "duplicate" if same else "conflict",
                "warning" if same else "error",
                f"rule `{rule.id}` matches exactly the cells of rule `{twin.id}` "
                f"(line {twin.location.line}), which gives {lanes}",
                rule.location,
                ("rules", rule.index),
                help="delete one of the two rules"
                if same
                else "decide which lane these cells get and delete the other rule",
                cells=cells_text(view.matched_by[rule.index]),
                rule=rule.id,
            )
        )
    return found


def shadowed(view: TableView) -> list[Diagnostic]:
    if not view.first:
        return []  # under `unique` a second matching rule is an `overlap` error already
    found = []
    for rule in view.policy.rules:
        if view.won_by[rule.index] or view.twin_of(rule) is not None:
            continue
        cells = view.matched_by[rule.index]
        winners = sorted({view.compiled.table[cell].rule or "" for cell in cells})
        found.append(
            Diagnostic(
                "shadowed",
                "error",
                f"rule `{rule.id}` matches {len(cells)} cell(s) but never wins one; rules "
                f"above it take them first ({', '.join(f'`{w}`' for w in winners)})",
                rule.location,
                ("rules", rule.index),
                help="move it above the rules that take its cells, narrow theirs, or delete it",
                cells=cells_text(cells),
                rule=rule.id,
            )
        )
    return found


def _taker(view: TableView, rule: Rule, cell: Cell) -> Rule | None:
    """Who would decide `cell` if `rule` were removed (None: the default)."""
    rest = [index for index in view.compiled.matches[cell] if index != rule.index]
    return view.policy.rules[rest[0]] if rest else None


def redundant(view: TableView) -> list[Diagnostic]:
    if not view.first:
        return []  # under `unique` removing a rule leaves its cells to the default: a gap
    found = []
    for rule in view.policy.rules:
        won = view.won_by[rule.index]
        takers = [_taker(view, rule, cell) for cell in won]
        if not won or any(t is None or t.lane != rule.lane for t in takers):
            continue
        if any(view.twin_of(t) is rule for t in takers if t is not None):
            continue  # reported as `duplicate` on the twin
        named = ", ".join(f"`{n}`" for n in sorted({t.id for t in takers if t is not None}))
        found.append(
            Diagnostic(
                "redundant",
                "warning",
                f"rule `{rule.id}` changes no lane: without it, the {len(won)} cell(s) it "
                f"decides would get the same lane `{rule.lane}` from {named}",
                rule.location,
                ("rules", rule.index),
                help="delete the rule, or keep it and exempt it if its reason is the one "
                "auditors should read",
                cells=cells_text(won),
                rule=rule.id,
            )
        )
    return found


def _with_value(cell: Cell, position: int, value: str) -> Cell:
    values = list(cell)
    values[position] = value
    return (values[0], values[1], values[2], values[3])


def widened(view: TableView, rule: Rule, fact: str) -> CellSet:
    """The cells the rule would match in addition if its `fact` entry were removed."""
    position = FACT_NAMES.index(fact)
    cells = view.matched_by[rule.index]
    grown = {_with_value(cell, position, value) for cell in cells for value in FACTS[fact]}
    return frozenset(grown) - cells


def _entry_diagnostic(view: TableView, rule: Rule, fact: str) -> Diagnostic | None:
    location = view.policy.source.location(("rules", rule.index, "when", fact), key=True)
    path = ("rules", rule.index, "when", fact)
    if rule.when[fact] == frozenset(FACTS[fact]):
        return Diagnostic(
            "full-domain-entry",
            "warning",
            f"`{fact}` in rule `{rule.id}` lists every value of the fact, so it restricts nothing",
            location,
            path,
            help=f"omit `{fact}` from the `when`: an absent fact matches any value",
            rule=rule.id,
        )
    extra = widened(view, rule, fact)
    matches = view.compiled.matches
    if not view.first and any(matches[cell] for cell in extra):
        return None  # dropping it would make rules overlap
    if any(
        view.lane_with(cell, (*matches[cell], rule.index)) != view.compiled.table[cell].lane
        for cell in extra
    ):
        return None
    taken = [cell for cell in extra if not matches[cell] or matches[cell][0] > rule.index]
    if not taken:
        # Under `first`, every extra cell is decided by an earlier rule: the entry only
        # restates what rule order already says, which keeps a rule readable on its own.
        return None
    return Diagnostic(
        "irrelevant-fact",
        "warning",
        f"`{fact}` in rule `{rule.id}` changes no lane: without it the rule would also decide "
        f"{len(taken)} more cell(s), each with the lane it gets now",
        location,
        path,
        help=f"remove `{fact}` from the `when`; no decision depends on it",
        cells=cells_text(taken),
        rule=rule.id,
    )


def irrelevant_entries(view: TableView) -> list[Diagnostic]:
    found = []
    for rule in view.policy.rules:
        for fact in FACT_NAMES:
            if fact in rule.when:
                diagnostic = _entry_diagnostic(view, rule, fact)
                if diagnostic is not None:
                    found.append(diagnostic)
    return found


def _projection(cells: CellSet) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(cell[i] for cell in cells) for i in range(len(FACT_NAMES)))


def _merge_keeps_lanes(view: TableView, kept: Rule, merged: Rule) -> bool:
    matches = view.compiled.matches
    union = view.matched_by[kept.index] | view.matched_by[merged.index]
    return all(
        view.lane_with(cell, [i for i in matches[cell] if i != merged.index] + [kept.index])
        == view.compiled.table[cell].lane
        for cell in union
    )


def _contraction(view: TableView, first: Rule, second: Rule) -> Diagnostic | None:
    if first.lane != second.lane:
        return None
    a = _projection(view.matched_by[first.index])
    b = _projection(view.matched_by[second.index])
    differing = [FACT_NAMES[i] for i in range(len(FACT_NAMES)) if a[i] != b[i]]
    if len(differing) != 1 or not _merge_keeps_lanes(view, first, second):
        return None
    fact = differing[0]
    index = FACT_NAMES.index(fact)
    values = [v for v in FACTS[fact] if v in a[index] | b[index]]
    merged = (
        f"one rule without `{fact}`"
        if len(values) == len(FACTS[fact])
        else f"one rule with `{fact}: [{', '.join(values)}]`"
    )
    return Diagnostic(
        "contractible",
        "info",
        f"rules `{first.id}` and `{second.id}` give lane `{first.lane}` and differ only in "
        f"`{fact}`: {merged} would decide the same",
        second.location,
        ("rules", second.index),
        help="merge them if they share one reason; keep them apart if their reasons differ",
        cells=cells_text(view.matched_by[first.index] | view.matched_by[second.index]),
        rule=second.id,
    )


def contractible(view: TableView) -> list[Diagnostic]:
    # Rules that never matter are reported by stronger checks; merging them means nothing.
    rules = [r for r in view.policy.rules if view.won_by[r.index] and view.twin_of(r) is None]
    found = []
    for position, second in enumerate(rules):
        for first in rules[:position]:
            diagnostic = _contraction(view, first, second)
            if diagnostic is not None:
                found.append(diagnostic)
                break
    return found


def hit_policy_first(view: TableView) -> list[Diagnostic]:
    if not view.first:
        return []
    shared = [cell for cell in all_cells() if len(view.compiled.matches[cell]) > 1]
    if shared:
        message = (
            f"`hit_policy: first` lets rule order decide {len(shared)} cell(s) that several "
            "rules match; a reader must read the rules top to bottom"
        )
        advice = "that is fine when the order is the point; `unique` makes each rule stand alone"
    else:
        message = "no two rules overlap, so `hit_policy: unique` would decide the same"
        advice = "switch to `hit_policy: unique`: it keeps the rules from overlapping later"
    return [
        Diagnostic(
            "hit-policy-first",
            "info",
            message,
            view.policy.source.location(("hit_policy",)),
            ("hit_policy",),
            help=advice,
            cells=cells_text(shared),
        )
    ]


def missing_invariants(view: TableView) -> list[Diagnostic]:
    if view.policy.invariants:
        return []
    return [
        Diagnostic(
            "missing-invariants",
            "info",
            "the policy states no invariants",
            view.policy.source.location(("policy",), key=True),
            help="add `invariants:` for what must always hold (e.g. `when: {mode: text}`, "
            "`expect: text`); they are checked over every cell",
        )
    ]


TABLE_CHECKS: tuple[tuple[str, Callable[[TableView], list[Diagnostic]]], ...] = (
    ("gaps", gaps),
    ("duplicates", duplicates_and_conflicts),
    ("shadowed", shadowed),
    ("redundant", redundant),
    ("irrelevant", irrelevant_entries),
    ("contractible", contractible),
    ("hit_policy", hit_policy_first),
    ("invariants", missing_invariants),
)


# A rule that never matters (shadowed, redundant, a duplicate) is reported once, by the
# strongest finding; the weaker ones about the same rule would only repeat it.
_STRONG = frozenset({"shadowed", "redundant", "duplicate", "conflict"})
_WEAK = frozenset({"irrelevant-fact", "contractible"})


def table_diagnostics(compiled: CompiledPolicy) -> list[Diagnostic]:
    """Every table check, in a stable order."""
    view = TableView.of(compiled)
    found = [diagnostic for _name, check in TABLE_CHECKS for diagnostic in check(view)]
    settled = {d.rule for d in found if d.code in _STRONG}
    return [d for d in found if not (d.code in _WEAK and d.rule in settled)]
