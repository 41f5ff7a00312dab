"""`visiongate audit ... --html FILE`: one self-contained page of charts and findings.

Rendered from the `AuditResult` alone (aggregate first, draw after): the page of a trace of
a million decisions is as small and as quick to draw as the page of a thousand. Findings
list the decisions the aggregate kept as samples, each linked to its entry at the end of
the page, which says where it is and how to explain it in words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..audit._policies import Standing
from ..audit._result import AuditResult, Finding, PolicyUse, Sample, model_label, policy_label
from . import _audit_data as data
from ._charts import NATIVE, TEXT, Series, bytes_text, columns_over_time, count_text, stacked_bars
from ._page import code, esc, figure, html_page, table

ATTACHED = Series("attached", NATIVE.fill, NATIVE.outline)
KEPT_OUT = Series("kept out", TEXT.fill, TEXT.outline)
SENT = Series("sent as pixels", NATIVE.fill, NATIVE.outline)
SAVED = Series("kept out or saved", TEXT.fill, TEXT.outline)


def render_audit_html(result: AuditResult) -> str:
    body = [
        "<h1>Decision audit</h1>",
        f'<p class="lead">{esc(_lead(result))}</p>',
        _tiles(result),
        *_lanes_section(result),
        *_media_section(result),
        *_findings_section(result),
        *_policies_section(result),
        *_samples_section(result),
    ]
    return html_page("visiongate audit", body)


def _lead(result: AuditResult) -> str:
    inputs = ", ".join(result.inputs) or "no input"
    span = data.span_text(result.first, result.last)
    return f"{count_text(result.decisions)} decisions, {span}; from {inputs}"


def _tiles(result: AuditResult) -> str:
    lanes = result.counts("lane")
    total = result.decisions or 1
    media = data.media_total(result)
    tiles = [
        ("decisions", count_text(result.decisions), ""),
        ("native", f"{100 * lanes['native'] / total:.0f}% ({count_text(lanes['native'])})", ""),
        ("text", f"{100 * lanes['text'] / total:.0f}% ({count_text(lanes['text'])})", ""),
        ("images attached", count_text(media.attached), ""),
        ("images kept out", count_text(media.kept_out), ""),
        ("bytes kept out or saved", bytes_text(media.bytes_saved), ""),
        ("stale policy", count_text(result.stale.count), _flag(result.stale.count)),
        (
            "native, unconfirmed model",
            count_text(result.unconfirmed_native.count),
            _flag(result.unconfirmed_native.count),
        ),
        ("malformed lines", count_text(result.malformed.count), _flag(result.malformed.count)),
    ]
    items = "".join(
        f'<li class="{css}">{esc(name)}<strong>{esc(value)}</strong></li>'
        for name, value, css in tiles
    )
    return f'<ul class="facts">{items}</ul>'


def _flag(count: int) -> str:
    return "finding" if count else "ok"


def _bars(label: str, rows: data.Buckets, caption: str) -> str:
    if not rows:
        return "<p>No decisions.</p>"
    return figure(stacked_bars(label, rows), caption)


def _columns(count: int, unit: str) -> str:
    """`1 hour`, `3 days`, `12 columns of 5 minutes`."""
    if unit[:1].isdigit():
        return f"{count} column{'s' * (count != 1)} of {unit}"
    return f"{count} {unit}{'s' * (count != 1)}"


def _lanes_section(result: AuditResult) -> list[str]:
    unit, buckets = data.time_buckets(result)
    over_time = (
        figure(
            columns_over_time(f"decisions per {unit}, by lane", buckets),
            f"decisions per {unit} ({_columns(len(buckets), unit)}), native below, text above",
        )
        if buckets
        else "<p>No decisions.</p>"
    )
    return [
        "<h2>Lanes over time</h2>",
        over_time,
        "<h2>By provider and model</h2>",
        _bars(
            "decisions by provider and model",
            data.models(result),
            "decisions per model, split by lane; the total and the native share follow",
        ),
        "<h2>By source</h2>",
        _bars(
            "decisions by image source",
            data.sources(result),
            "decisions per tool source, split by lane",
        ),
        "<h2>By rule</h2>",
        _bars(
            "decisions by deciding rule",
            data.rules(result),
            "decisions per deciding rule, split by lane",
        ),
    ]


def _media_section(result: AuditResult) -> list[str]:
    by_source = data.media_by_source(result)
    if not by_source:
        return ["<h2>Images and bytes</h2>", "<p>No decision records an execution.</p>"]
    images = [
        (name, {ATTACHED.name: m.attached, KEPT_OUT.name: m.kept_out})
        for name, m in by_source.items()
    ]
    volume = [
        (name, {SENT.name: m.bytes_after, SAVED.name: m.bytes_saved})
        for name, m in by_source.items()
    ]
    rows = [
        [
            esc(name),
            count_text(m.decisions),
            count_text(m.images),
            count_text(m.attached),
            count_text(m.kept_out),
            count_text(m.refused),
            bytes_text(m.bytes_before),
            bytes_text(m.bytes_after),
            bytes_text(m.bytes_saved),
        ]
        for name, m in [*by_source.items(), ("all sources", data.media_total(result))]
    ]
    head = [
        "source",
        "decisions",
        "images",
        "attached",
        "kept out",
        "refused",
        "bytes in",
        "bytes sent",
        "kept out or saved",
    ]
    return [
        "<h2>Images and bytes</h2>",
        figure(
            stacked_bars("images attached and kept out, by source", images, (ATTACHED, KEPT_OUT)),
            "images the tools produced: attached as pixels, or kept out (text lane, refused, "
            "over the per-result limit)",
        ),
        figure(
            stacked_bars("bytes sent and saved, by source", volume, (SENT, SAVED), bytes_text),
            "bytes the tools produced: sent to the model as pixels (after re-encoding), or "
            "kept out of the history and saved",
        ),
        table(head, rows, numeric=range(1, 9)),
    ]


def _decision_link(sample: Sample) -> str:
    return f'<a href="#decision-{esc(sample.decision_id)}">{esc(sample.decision_id)}</a>'


def _sample_rows(finding: Finding, with_note: bool) -> list[list[str]]:
    return [
        [
            _decision_link(s),
            esc(f"{s.timestamp:%Y-%m-%d %H:%M:%S}Z"),
            esc(model_label(s.provider, s.model)),
            esc(s.catalog),
            code(s.rule or "(default)"),
            *([esc(s.note or "")] if with_note else []),
        ]
        for s in finding.samples
    ]


def _finding(title: str, explain: str, finding: Finding, with_note: bool = False) -> list[str]:
    head = ["decision", "time", "model", "catalog", "rule", *(["reason"] if with_note else [])]
    lines = [f"<h3>{esc(title)}: {count_text(finding.count)}</h3>", f"<p>{esc(explain)}</p>"]
    if not finding.count:
        return lines
    lines.append(table(head, _sample_rows(finding, with_note)))
    if finding.count > len(finding.samples):
        more = finding.count - len(finding.samples)
        lines.append(
            f"<p>… and {count_text(more)} more; the first {len(finding.samples)} are listed.</p>"
        )
    return lines


def _findings_section(result: AuditResult) -> list[str]:
    lines = ["<h2>Findings</h2>"]
    lines += _finding(
        "Decided under a policy other than its current content",
        "the policy file (or the bundled policy) changed since these decisions were made",
        result.stale,
    )
    lines += _finding(
        "Native lane for models the catalog calls no_vision or unknown",
        "pixels went to a model the catalog does not confirm reads images",
        result.unconfirmed_native,
    )
    lines += _finding(
        "Decisions with refused images",
        "images the image stage or the payload "
        "guard refused (corrupt, over a limit, over the per-result count)",
        result.refused_images,
        with_note=True,
    )
    lines += _finding(
        "Routes that refuse images",
        "the provider route does not take images in "
        "tool results (path=refuses): documented, learned from an error, or probed",
        result.route_refusals,
    )
    refusing = data.route_refusals_by_model(result)
    if refusing:
        rows = [[esc(name), count_text(sum(lanes.values()))] for name, lanes in refusing]
        lines.append(table(["model", "decisions"], rows, numeric=(1,)))
    lines += _malformed(result)
    return lines


def _malformed(result: AuditResult) -> list[str]:
    lines = [f"<h3>Malformed lines: {count_text(result.malformed.count)}</h3>"]
    if result.malformed_lines:
        rows = [
            [esc(f"{item.file}:{item.line}"), esc(item.problem)] for item in result.malformed_lines
        ]
        lines.append(table(["where", "problem"], rows))
    lines += [f"<p>input error: {esc(error)}</p>" for error in result.input_errors]
    return lines


def _standing(use: PolicyUse) -> str:
    standing = use.status.standing
    if standing is Standing.STALE:
        return "<strong>stale</strong>: not the current content"
    return esc(standing.value)


def _policies_section(result: AuditResult) -> list[str]:
    rows = [
        [
            esc(policy_label(use.policy)),
            esc(use.policy.origin),
            count_text(use.count),
            _standing(use),
        ]
        for use in result.policies
    ]
    lines = [
        "<h2>Policies</h2>",
        table(["policy", "origin", "decisions", "standing"], rows, numeric=(2,)),
    ]
    if result.warnings:
        warned = sorted(result.warnings.items(), key=lambda item: (-item[1], item[0]))[:20]
        lines += [
            f"<h2>Warnings ({count_text(result.warned_decisions)} decisions)</h2>",
            table(["warning", "times"], [[esc(w), count_text(n)] for w, n in warned], numeric=(1,)),
        ]
    return lines


def _unique_samples(findings: Iterable[Finding]) -> list[Sample]:
    seen: dict[str, Sample] = {}
    for finding in findings:
        for sample in finding.samples:
            seen.setdefault(sample.decision_id, sample)
    return sorted(seen.values(), key=lambda sample: (sample.timestamp, sample.decision_id))


def _samples_section(result: AuditResult) -> list[str]:
    findings: Sequence[Finding] = (
        result.stale,
        result.unconfirmed_native,
        result.refused_images,
        result.route_refusals,
    )
    samples = _unique_samples(findings)
    if not samples:
        return []
    rows = "".join(
        f'<tr id="decision-{esc(s.decision_id)}"><td>{code(s.decision_id)}</td>'
        f"<td>{esc(f'{s.timestamp:%Y-%m-%d %H:%M:%S}Z')}</td>"
        f"<td>{esc(model_label(s.provider, s.model))}</td><td>{esc(policy_label(s.policy))}</td>"
        f"<td>{code(f'{s.file}:{s.line}')}</td>"
        f"<td>{code(f'visiongate audit {s.file} --decision {s.decision_id}')}</td></tr>"
        for s in samples
    )
    head = "".join(
        f'<th scope="col">{name}</th>'
        for name in ("decision", "time", "model", "policy", "where", "explain it")
    )
    return [
        "<h2>Decisions the findings name</h2>",
        "<p>Each finding above links here; the command in the last column tells the decision "
        "in plain words.</p>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>",
    ]
