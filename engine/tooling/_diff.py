"""`visiongate diff`: the semantic difference between two versions of a policy, cell by cell.

Cedar's `analyze compare` labels two policy versions equivalent, more or less permissive,
or incomparable; over every cell of the space the comparison is exact and lists every
cell that moved.
Here "more permissive" means pixels reach the model in more cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from visiongate.kernel._display import json_text, visible

from .._compile import CellVerdict
from .._load import CompiledPolicy, compile_policy_text
from .._policy import Policy
from .._vocabulary import SOURCES, Cell, all_cells, format_cell
from ._sources import SourceError, read_source

__all__ = ["PolicyDiff", "SourceError", "diff_policies", "diff_sources", "read_source"]

SCHEMA_VERSION = 1
"""Of the `--json` output (`visiongate/schemas/diff.json`)."""


@dataclass(frozen=True)
class CellChange:
    cell: Cell
    old: CellVerdict
    new: CellVerdict

    def as_dict(self) -> dict[str, Any]:
        return {
            "cell": format_cell(self.cell),
            "old": {"lane": self.old.lane, "rule": self.old.rule},
            "new": {"lane": self.new.lane, "rule": self.new.rule},
        }


@dataclass(frozen=True)
class PolicyDiff:
    old_label: str
    new_label: str
    old: CompiledPolicy
    new: CompiledPolicy
    lane_changes: tuple[CellChange, ...]
    rule_changes: tuple[CellChange, ...]
    """Cells that keep their lane but are decided by another rule (traces will differ)."""
    setting_changes: tuple[tuple[str, str, str], ...] = ()
    """(setting, old, new) for execution and sanitize settings that differ."""

    @property
    def became_native(self) -> int:
        return sum(change.new.lane == "native" for change in self.lane_changes)

    @property
    def became_text(self) -> int:
        return len(self.lane_changes) - self.became_native

    @property
    def verdict(self) -> str:
        if not self.lane_changes:
            return "equivalent"
        if not self.became_text:
            return "more permissive"
        if not self.became_native:
            return "less permissive"
        return "incomparable"

    def summary(self) -> str:
        if not self.lane_changes:
            head = "no cell changes lane (equivalent)"
        else:
            head = (
                f"{len(self.lane_changes)} cell(s) change lane: {self.became_native} become "
                f"native, {self.became_text} become text ({self.verdict})"
            )
        if self.rule_changes:
            head += f"; {len(self.rule_changes)} keep their lane but change the deciding rule"
        if self.setting_changes:
            head += f"; {len(self.setting_changes)} setting(s) change"
        return head


def settings_of(policy: Policy) -> dict[str, str]:
    """Execution and sanitize settings, flattened to `section.key: value` (defaults filled)."""
    execution, sanitize = policy.execution, policy.sanitize
    flat = {f"execution.native.{k}": str(v) for k, v in vars(execution.native).items()}
    for source, native in sorted(execution.native_by_source.items()):
        flat |= {f"execution.native.sources.{source}.{k}": str(v) for k, v in vars(native).items()}
    flat |= {f"execution.text.{source}": execution.text_action(source) for source in SOURCES}
    for key in ("keep_recent_images", "max_calls_per_image"):
        flat[f"execution.{key}"] = str(getattr(execution, key) or "unbounded")
    flat["execution.user_only"] = execution.user_only
    flat |= {f"sanitize.{k}": str(v) for k, v in vars(sanitize).items()}
    return flat


def _setting_changes(old: Policy, new: Policy) -> tuple[tuple[str, str, str], ...]:
    before, after = settings_of(old), settings_of(new)
    keys = sorted(set(before) | set(after))
    return tuple(
        (key, before.get(key, "(none)"), after.get(key, "(none)"))
        for key in keys
        if before.get(key) != after.get(key)
    )


def diff_policies(
    old: CompiledPolicy, new: CompiledPolicy, old_label: str = "old", new_label: str = "new"
) -> PolicyDiff:
    """Compare two compiled policies over every cell."""
    lanes, rules = [], []
    for cell in all_cells():
        before, after = old.table[cell], new.table[cell]
        if before.lane != after.lane:
            lanes.append(CellChange(cell, before, after))
        elif before.rule != after.rule:
            rules.append(CellChange(cell, before, after))
    settings = _setting_changes(old.policy, new.policy)
    return PolicyDiff(old_label, new_label, old, new, tuple(lanes), tuple(rules), settings)


def diff_sources(old_spec: str, new_spec: str) -> PolicyDiff:
    """Read, compile and compare; raises `SourceError` or `PolicyError`."""
    old_text, old_label = read_source(old_spec)
    new_text, new_label = read_source(new_spec)
    old = compile_policy_text(old_text, old_label)
    new = compile_policy_text(new_text, new_label)
    return diff_policies(old, new, old_label, new_label)


def _rule(rule: str | None) -> str:
    return rule or "(default)"


def _policy_line(label: str, compiled: CompiledPolicy) -> str:
    policy = compiled.policy
    return f"{label}: {policy.name} {policy.version} (sha256 {policy.sha256[:12]})"


def render_text(diff: PolicyDiff) -> str:
    lines = [
        f"old {_policy_line(diff.old_label, diff.old)}",
        f"new {_policy_line(diff.new_label, diff.new)}",
    ]
    if diff.lane_changes:
        lines.append(f"lane changes ({len(diff.lane_changes)}):")
        lines += [
            f"  {format_cell(c.cell)}: {c.old.lane} -> {c.new.lane}  "
            f"(rule {_rule(c.old.rule)} -> {_rule(c.new.rule)})"
            for c in diff.lane_changes
        ]
    if diff.rule_changes:
        lines.append(f"same lane, other rule ({len(diff.rule_changes)}):")
        lines += [
            f"  {format_cell(c.cell)}: {c.new.lane}  "
            f"(rule {_rule(c.old.rule)} -> {_rule(c.new.rule)})"
            for c in diff.rule_changes
        ]
    if diff.setting_changes:
        lines.append(f"settings ({len(diff.setting_changes)}):")
        lines += [f"  {key}: {before} -> {after}" for key, before, after in diff.setting_changes]
    lines.append(diff.summary())
    return "\n".join(visible(line) for line in lines)


def render_json(diff: PolicyDiff) -> str:
    def side(label: str, compiled: CompiledPolicy) -> dict[str, str]:
        policy = compiled.policy
        return {
            "source": label,
            "name": policy.name,
            "version": policy.version,
            "sha256": policy.sha256,
        }

    document = {
        "schema_version": SCHEMA_VERSION,
        "old": side(diff.old_label, diff.old),
        "new": side(diff.new_label, diff.new),
        "verdict": diff.verdict,
        "became_native": diff.became_native,
        "became_text": diff.became_text,
        "lane_changes": [c.as_dict() for c in diff.lane_changes],
        "rule_changes": [c.as_dict() for c in diff.rule_changes],
        "setting_changes": [
            {"setting": key, "old": before, "new": after}
            for key, before, after in diff.setting_changes
        ],
        "summary": diff.summary(),
    }
    return json_text(document, indent=2)
