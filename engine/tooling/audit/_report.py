"""Rendering an `AuditResult`: the summary and `--group-by` tables, as text, JSON or CSV."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final

from visiongate.kernel._display import json_text, visible

from ._policies import Standing
from ._result import AuditResult, Finding, PolicyUse, Sample, model_label, policy_label

SHOWN: Final = 10
FORMATS: Final = ("text", "json", "csv")
JSON_VERSION: Final = 2
"""The `schema_version` of `--format json` (`visiongate/schemas/audit.json`)."""
SUMMARY_DIMENSIONS: Final = ("lane", "rule", "source", "model", "policy", "day")


def render(result: AuditResult, form: str) -> str:
    if form == "json":
        return render_json(result)
    if form == "csv":
        return render_csv(result)
    return render_text(result)


def _time(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else "-"


def _counts(counter: Counter[str], total: int) -> str:
    if not counter:
        return "none"
    return ", ".join(
        f"{name} {count} ({100 * count / total:.0f}%)" for name, count in counter.most_common()
    )


def _policy_line(use: PolicyUse) -> str:
    policy, status = use.policy, use.status
    head = f"{policy_label(use.policy)} ({policy.origin}): {use.count}"
    current = (status.current_sha256 or "?")[:12]
    if status.standing is Standing.CURRENT:
        return f"{head} - the current content"
    if status.standing is Standing.NOT_FOUND:
        return f"{head} - {status.compared_with} not found, cannot compare"
    if status.standing is Standing.OTHER_RELEASE:
        return f"{head} - from another release; not compared with {status.compared_with}"
    return f"{head} - NOT the current content (now sha256 {current})"


def _sample_line(sample: Sample) -> str:
    who = model_label(sample.provider, sample.model)
    return (
        f"{sample.decision_id} {_time(sample.timestamp)} {who}"
        f" catalog={sample.catalog} rule={sample.rule or '(default)'} "
        f"[{sample.file}:{sample.line}]"
    )


def _listed(title: str, finding: Finding) -> list[str]:
    if not finding.count:
        return [f"{title}: none"]
    lines = [f"{title} ({finding.count}):"]
    lines += [f"  {_sample_line(sample)}" for sample in finding.samples[:SHOWN]]
    if finding.count > SHOWN:
        lines.append(f"  ... and {finding.count - SHOWN} more (the first ones: --format json)")
    return lines


def render_text(result: AuditResult) -> str:
    total = result.decisions or 1
    span = f", {_time(result.first)} .. {_time(result.last)}" if result.decisions else ""
    lines = [
        f"{result.decisions} decision(s){span}; {result.malformed.count} malformed line(s) skipped",
        *(str(item) for item in result.unmatched),
    ]
    if result.group_by:
        findings = (
            f"findings: {result.stale.count} under a stale policy, "
            f"{result.unconfirmed_native.count} native for unconfirmed models, "
            f"{result.malformed.count} malformed (details without --group-by)"
        )
        return _shown([*lines, *_group_text(result), findings, *_problems(result)])
    lines += [
        f"lanes:    {_counts(result.counts('lane'), total)}",
        f"rules:    {_counts(result.counts('rule'), total)}",
        f"sources:  {_counts(result.counts('source'), total)}",
        f"models:   {_counts(result.counts('model'), total)}",
        "policies:",
        *(f"  {_policy_line(use)}" for use in result.policies),
    ]
    lines += _listed("decided under a policy other than its current content", result.stale)
    lines += _listed(
        "native lane for models the catalog calls no_vision (or unknown, outside native mode)",
        result.unconfirmed_native,
    )
    warned = result.warned_decisions
    lines.append(f"warnings ({warned} decision(s)):" if warned else "warnings: none")
    lines += [f"  {count}x {text}" for text, count in Counter(result.warnings).most_common()]
    if result.amendments:
        lines.append(
            f"amended: {result.amendments} record(s) written again for a decision counted once"
        )
    if result.lost_records:
        lines.append(
            f"trace gaps: the writers reported {result.lost_records} record(s) they could not "
            "write (trace_errors)"
        )
    for title, numbers in (("execution", result.execution), ("sanitizer", result.sanitizer)):
        if numbers:
            lines.append(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(numbers.items())))
    return _shown(lines + _problems(result))


def _shown(lines: list[str]) -> str:
    # Trace fields are whoever wrote the trace's words: a line cannot hold a control.
    return "\n".join(visible(line) for line in lines)


def _problems(result: AuditResult) -> list[str]:
    lines: list[str] = []
    if result.malformed.count:
        lines.append(f"malformed lines ({result.malformed.count}):")
        lines += [f"  {item}" for item in result.malformed_lines]
        if result.malformed.count > len(result.malformed_lines):
            lines.append(f"  ... and {result.malformed.count - len(result.malformed_lines)} more")
    lines += [f"input error: {error}" for error in result.input_errors]
    return lines


def group_rows(result: AuditResult) -> list[tuple[tuple[str, ...], Mapping[str, int]]]:
    """Groups in order: by time when grouped by day or hour, else by decisions."""
    rows = list(result.groups.items())
    if {"day", "hour"} & set(result.group_by):
        return sorted(rows)
    return sorted(rows, key=lambda row: (-sum(row[1].values()), row[0]))


def _group_table(result: AuditResult) -> list[list[str]]:
    header = [*result.group_by, "decisions", "native", "text"]
    body = [
        [*values, str(sum(lanes.values())), str(lanes.get("native", 0)), str(lanes.get("text", 0))]
        for values, lanes in group_rows(result)
    ]
    return [header, *body]


def _group_text(result: AuditResult) -> list[str]:
    table = _group_table(result)
    widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]


def render_csv(result: AuditResult) -> str:
    """`--group-by`: one row per group; otherwise `dimension,value,decisions` rows."""
    buffer = io.StringIO()
    writer = _VisibleWriter(csv.writer(buffer, lineterminator="\n"))
    if result.group_by:
        writer.writerows(_group_table(result))
        return buffer.getvalue().rstrip("\n")
    writer.writerow(["dimension", "value", "decisions"])
    for dimension in SUMMARY_DIMENSIONS:
        for value, count in sorted(result.counts(dimension).items()):
            writer.writerow([dimension, value, count])
    for name, finding in (
        ("stale_policy", result.stale),
        ("unconfirmed_native", result.unconfirmed_native),
        ("malformed", result.malformed),
    ):
        writer.writerow(["finding", name, finding.count])
    return buffer.getvalue().rstrip("\n")


class _VisibleWriter:
    """A CSV writer whose cells go through `visible`: a spreadsheet is read by a person too."""

    def __init__(self, writer: Any) -> None:
        self._writer = writer

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([visible(cell) if isinstance(cell, str) else cell for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def _samples(finding: Finding) -> dict[str, Any]:
    return {
        "count": finding.count,
        "first": [
            {"decision_id": s.decision_id, "file": s.file, "line": s.line} for s in finding.samples
        ],
    }


def _policy_json(use: PolicyUse) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    for key in ("name", "version", "sha256", "path", "bundled", "package_version"):
        value = getattr(use.policy, key)
        if value is not None:
            policy[key] = value
    return {
        **policy,
        "count": use.count,
        "standing": use.status.standing.value,
        "current": use.status.standing is Standing.CURRENT,
        "current_sha256": use.status.current_sha256,
        "compared_with": use.status.compared_with,
    }


def render_json(result: AuditResult) -> str:
    document: dict[str, Any] = {
        "schema_version": JSON_VERSION,
        "inputs": list(result.inputs),
        "decisions": result.decisions,
        "first": _time(result.first) if result.decisions else None,
        "last": _time(result.last) if result.decisions else None,
        "findings": result.findings,
        "unmatched_filters": [vars(item) for item in result.unmatched],
    }
    if result.group_by:
        document["group_by"] = list(result.group_by)
        document["groups"] = [
            {**dict(zip(result.group_by, values, strict=True)), "decisions": sum(lanes.values()),
             "lanes": dict(lanes)}
            for values, lanes in group_rows(result)
        ]  # fmt: skip
    else:
        document.update({f"{d}s": dict(result.counts(d)) for d in ("lane", "rule", "source")})
        document["models"] = dict(result.counts("model"))
        document["days"] = dict(sorted(result.counts("day").items()))
        document["policies"] = [_policy_json(use) for use in result.policies]
        document["warnings"] = dict(result.warnings)
        document["lost_records"] = result.lost_records
        document["amendments"] = result.amendments
        document["execution"] = dict(result.execution)
        document["sanitizer"] = dict(result.sanitizer)
    document["stale_policy"] = _samples(result.stale)
    document["unconfirmed_native"] = _samples(result.unconfirmed_native)
    document["malformed"] = {
        "count": result.malformed.count,
        "first": [vars(item) for item in result.malformed_lines],
    }
    document["input_errors"] = list(result.input_errors)
    return json_text(document, indent=2)
