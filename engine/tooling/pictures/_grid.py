"""The decision table as a grid: rows are `mode` x `catalog`, columns `aux` x `path`.

Everything is derived from the vocabulary: a new fact value adds a row or a column, and the
split between rows and columns is the first half of the facts against the second. A grid is
built from one compiled policy (`policy_grid`) or from a diff of two (`diff_grid`), and the
renderers draw it the same way.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..._load import CompiledPolicy
from ..._policy import condition_matches
from ..._vocabulary import FACT_NAMES, FACTS, Cell, all_cells
from .._diff import PolicyDiff

ROW_FACTS: Final = FACT_NAMES[: len(FACT_NAMES) // 2]
COLUMN_FACTS: Final = FACT_NAMES[len(FACT_NAMES) // 2 :]
LANE_WORDS: Final = {
    "native": "pixels are attached to the tool result",
    "text": "pixels are kept out; the model gets a path or a description",
}
DEFAULT_RULE: Final = "(default)"


@dataclass(frozen=True)
class GridCell:
    """One cell as drawn: its lane and rule, the invariants that check it, what changed."""

    cell: Cell
    lane: str
    rule: str | None
    invariants: tuple[int, ...] = ()
    """1-based numbers of the invariants whose `when` selects this cell."""
    was_lane: str | None = None
    was_rule: str | None = None
    change: str = ""
    """`lane` (the lane changes), `rule` (same lane, another rule) or empty."""

    @property
    def rule_label(self) -> str:
        return self.rule or DEFAULT_RULE

    @property
    def was_rule_label(self) -> str:
        return self.was_rule or DEFAULT_RULE

    def describe(self) -> str:
        """The cell in one sentence, for tooltips and screen readers."""
        facts = ", ".join(f"{n}={v}" for n, v in zip(FACT_NAMES, self.cell, strict=True))
        said = f"{facts}: {self.lane}, decided by {self.rule_label}"
        if self.change == "lane":
            said += f" (was {self.was_lane}, decided by {self.was_rule_label})"
        elif self.change == "rule":
            said += f" (same lane, was decided by {self.was_rule_label})"
        if self.invariants:
            said += "; checked by invariant " + ", ".join(map(str, self.invariants))
        return said


@dataclass(frozen=True)
class InvariantNote:
    number: int
    id: str
    expect: str
    cells: int
    description: str


@dataclass(frozen=True)
class Grid:
    title: str
    """`policy default 2.0.0` or `diff old -> new`."""
    subtitle: str
    cells: Mapping[Cell, GridCell]
    invariants: tuple[InvariantNote, ...]
    is_diff: bool = False

    @property
    def rows(self) -> list[tuple[str, ...]]:
        return list(itertools.product(*(FACTS[name] for name in ROW_FACTS)))

    @property
    def columns(self) -> list[tuple[str, ...]]:
        return list(itertools.product(*(FACTS[name] for name in COLUMN_FACTS)))

    def at(self, row: tuple[str, ...], column: tuple[str, ...]) -> GridCell:
        values = dict(zip(ROW_FACTS + COLUMN_FACTS, row + column, strict=True))
        cell = tuple(values[name] for name in FACT_NAMES)
        return self.cells[(cell[0], cell[1], cell[2], cell[3])]

    def changed(self, kind: str) -> list[GridCell]:
        return [cell for cell in self.cells.values() if cell.change == kind]


def _invariants(compiled: CompiledPolicy) -> tuple[InvariantNote, ...]:
    return tuple(
        InvariantNote(
            number,
            invariant.id,
            invariant.expect,
            sum(condition_matches(invariant.when, cell) for cell in all_cells()),
            invariant.description,
        )
        for number, invariant in enumerate(compiled.policy.invariants, start=1)
    )


def _checked_by(compiled: CompiledPolicy, cell: Cell) -> tuple[int, ...]:
    return tuple(
        number
        for number, invariant in enumerate(compiled.policy.invariants, start=1)
        if condition_matches(invariant.when, cell)
    )


def policy_title(compiled: CompiledPolicy) -> str:
    policy = compiled.policy
    return f"policy {policy.name} {policy.version}"


def policy_subtitle(compiled: CompiledPolicy) -> str:
    policy = compiled.policy
    counts = Counter(verdict.lane for verdict in compiled.table.values())
    return (
        f"sha256 {policy.sha256[:12]} · hit policy {policy.hit_policy} · default lane "
        f"{policy.default} · {counts['native']} cells native, {counts['text']} text"
    )


def policy_grid(compiled: CompiledPolicy) -> Grid:
    """The grid of one policy."""
    cells = {
        cell: GridCell(
            cell, compiled.table[cell].lane, compiled.table[cell].rule, _checked_by(compiled, cell)
        )
        for cell in all_cells()
    }
    return Grid(policy_title(compiled), policy_subtitle(compiled), cells, _invariants(compiled))


def diff_grid(diff: PolicyDiff) -> Grid:
    """The grid of the new policy, with what changed from the old one marked on each cell."""
    cells: dict[Cell, GridCell] = {}
    for cell in all_cells():
        old, new = diff.old.table[cell], diff.new.table[cell]
        change = "lane" if old.lane != new.lane else "rule" if old.rule != new.rule else ""
        cells[cell] = GridCell(
            cell,
            new.lane,
            new.rule,
            _checked_by(diff.new, cell),
            old.lane if change else None,
            old.rule if change else None,
            change,
        )
    title = f"diff {diff.old_label} → {diff.new_label}"
    return Grid(title, diff.summary(), cells, _invariants(diff.new), is_diff=True)


@dataclass(frozen=True)
class Responsibility:
    """A rule that now decides cells whose lane changed, and which lanes they moved between."""

    rule: str
    was_rule: str
    was_lane: str
    lane: str
    cells: int


def responsible_rules(grid: Grid) -> list[Responsibility]:
    """Lane changes grouped by the rule that decides them now and the one that did before."""
    counts: Counter[tuple[str, str, str, str]] = Counter(
        (cell.rule_label, cell.was_rule_label, cell.was_lane or "", cell.lane)
        for cell in grid.changed("lane")
    )
    return [
        Responsibility(rule, was_rule, was_lane, lane, count)
        for (rule, was_rule, was_lane, lane), count in sorted(
            counts.items(), key=lambda item: (-item[1], item[0])
        )
    ]
