"""`explain --format html` and `diff --format html`: the grid picture with its tables, as a page."""

from __future__ import annotations

from ..._load import CompiledPolicy
from ..._vocabulary import all_cells, format_cell
from .._diff import PolicyDiff
from ._grid import diff_grid, policy_grid, responsible_rules
from ._grid_svg import render_grid_svg
from ._page import code, esc, figure, html_page, lane, table


def _policy_facts(compiled: CompiledPolicy) -> str:
    policy = compiled.policy
    items = [
        ("file", code(policy.path)),
        ("version", code(policy.version)),
        ("sha256", code(policy.sha256[:12])),
        ("hit policy", code(policy.hit_policy)),
        ("default lane", lane(policy.default)),
    ]
    return (
        '<ul class="facts">'
        + "".join(f"<li>{esc(name)}<strong>{value}</strong></li>" for name, value in items)
        + "</ul>"
    )


def _rules_table(compiled: CompiledPolicy) -> str:
    won = {rule.id: 0 for rule in compiled.policy.rules}
    for cell in all_cells():
        rule = compiled.table[cell].rule
        if rule is not None:
            won[rule] += 1
    rows = [
        [
            str(rule.index + 1),
            code(rule.id),
            code(rule.when_text()),
            lane(rule.lane),
            str(won[rule.id]),
            esc(rule.reason),
        ]
        for rule in compiled.policy.rules
    ]
    defaulted = sum(verdict.rule is None for verdict in compiled.table.values())
    if defaulted:
        rows.append(
            [
                "",
                "<em>(default)</em>",
                "no rule matches",
                lane(compiled.policy.default),
                str(defaulted),
                "the policy's default lane",
            ]
        )
    return table(["#", "rule", "when", "lane", "cells won", "reason"], rows, numeric=(0, 4))


def _invariants_table(compiled: CompiledPolicy) -> str:
    notes = policy_grid(compiled).invariants
    if not notes:
        return "<p>This policy states no invariants.</p>"
    rows = [
        [
            f"◆{note.number}",
            code(note.id),
            lane(note.expect),
            str(note.cells),
            esc(note.description),
        ]
        for note in notes
    ]
    return table(["mark", "invariant", "expect", "cells", "why"], rows, numeric=(3,))


def render_policy_html(compiled: CompiledPolicy) -> str:
    grid = policy_grid(compiled)
    policy = compiled.policy
    body = [
        f"<h1>Decision table of {code(policy.name)}</h1>",
        f'<p class="lead">{esc(policy.description)}</p>',
        _policy_facts(compiled),
        "<h2>Decision grid</h2>",
        figure(
            render_grid_svg(grid, standalone=False),
            f"every one of the {len(grid.cells)} cells: its lane, the rule that decides it "
            "and the invariants that check it",
        ),
        "<h2>Rules</h2>",
        _rules_table(compiled),
        "<h2>Invariants</h2>",
        _invariants_table(compiled),
    ]
    return html_page(f"visiongate: {grid.title}", body)


def _change_rows(diff: PolicyDiff, kind: str) -> list[list[str]]:
    changes = diff.lane_changes if kind == "lane" else diff.rule_changes
    return [
        [
            code(format_cell(change.cell)),
            lane(change.old.lane),
            code(change.old.rule or "(default)"),
            lane(change.new.lane),
            code(change.new.rule or "(default)"),
        ]
        for change in changes
    ]


def render_diff_html(diff: PolicyDiff) -> str:
    grid = diff_grid(diff)
    head = ["cell", "old lane", "old rule", "new lane", "new rule"]
    body = [
        f"<h1>Policy diff: {code(diff.old_label)} → {code(diff.new_label)}</h1>",
        f'<p class="lead">{esc(diff.summary())}</p>',
        figure(
            render_grid_svg(grid, standalone=False),
            "the new policy's grid; changed cells are outlined and say what they were",
        ),
    ]
    if diff.lane_changes:
        body += ["<h2>Cells that change lane</h2>", table(head, _change_rows(diff, "lane"))]
        responsible = [
            [
                code(item.rule),
                code(item.was_rule),
                f"{lane(item.was_lane)} → {lane(item.lane)}",
                str(item.cells),
            ]
            for item in responsible_rules(grid)
        ]
        body += [
            "<h2>Rules responsible</h2>",
            table(["rule now", "rule before", "lane", "cells"], responsible, numeric=(3,)),
        ]
    if diff.rule_changes:
        body += ["<h2>Same lane, another rule</h2>", table(head, _change_rows(diff, "rule"))]
    if diff.setting_changes:
        rows = [
            [code(key), code(before), code(after)] for key, before, after in diff.setting_changes
        ]
        body += ["<h2>Settings that change</h2>", table(["setting", "old", "new"], rows)]
    return html_page(f"visiongate: {grid.title}", body)
