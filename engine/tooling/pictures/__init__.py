"""Pictures for people: the decision table, policy diffs and audits as SVG, HTML and Markdown.

Everything here is rendered from values the rest of the tooling already computes (a compiled
table, a `PolicyDiff`, an `AuditResult`): no record is read here, so a report of a million
decisions costs what its aggregate costs.

The charts are hand-written SVG, from the standard library only. The pictures are grids and
bar charts, which a few hundred lines draw exactly; a charting library would add a large
dependency (matplotlib and numpy) or a script the page must run (Vega, Chart.js), while
static SVG is deterministic (golden files can compare it byte for byte), needs no script
(the pages forbid scripts and network loads in their Content-Security-Policy), prints as it
shows, and carries text a screen reader and a search can find.

- `_svg`: escaping and the few element builders the pictures use;
- `_grid`: the table as a grid model (rows `mode` x `catalog`, columns `aux` x `path`, all
  derived from the vocabulary), for one policy or for a diff of two;
- `_grid_svg`, `_grid_markdown`, `_grid_html`: that grid drawn for a browser, for GitHub or
  GitLab, and as a whole page;
- `_page`: the self-contained HTML shell (styles, print styles, no network);
- `_charts`: stacked bar charts and lanes over time;
- `_audit_html`, `_audit_sections`: the audit report.
"""

from __future__ import annotations

from typing import Final

from ..._load import CompiledPolicy
from .._diff import PolicyDiff
from ..audit._result import AuditResult

PICTURES: Final = ("html", "svg", "markdown")
"""The picture formats of `explain` and `diff` (next to their `text` and `json`)."""


def render_table_picture(compiled: CompiledPolicy, form: str) -> str:
    """The decision table of a policy as `html`, `svg` or `markdown`."""
    from ._grid import policy_grid

    if form == "html":
        from ._grid_html import render_policy_html

        return render_policy_html(compiled)
    if form == "svg":
        from ._grid_svg import render_grid_svg

        return render_grid_svg(policy_grid(compiled)) + "\n"
    from ._grid_markdown import render_policy_markdown

    return render_policy_markdown(policy_grid(compiled))


def render_diff_picture(diff: PolicyDiff, form: str) -> str:
    """A policy diff as `html`, `svg` or `markdown` (a pull request comment)."""
    if form == "html":
        from ._grid_html import render_diff_html

        return render_diff_html(diff)
    if form == "svg":
        from ._grid import diff_grid
        from ._grid_svg import render_grid_svg

        return render_grid_svg(diff_grid(diff)) + "\n"
    from ._grid_markdown import render_diff_markdown

    return render_diff_markdown(diff)


def render_audit_report(result: AuditResult) -> str:
    """The audit as one self-contained HTML page."""
    from ._audit_html import render_audit_html

    return render_audit_html(result)
