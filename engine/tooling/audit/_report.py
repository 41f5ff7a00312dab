"""Presenting an audit: the summary as text or JSON, and one decision in plain words."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..._vocabulary import FACT_NAMES
from ._read import AuditSummary, PolicyUse, TraceRecord, current_policy_sha

SHOWN = 10


def _counts(counter: Counter[str], total: int) -> str:
    if not counter:
        return "none"
    return ", ".join(
        f"{name} {count} ({100 * count / total:.0f}%)" for name, count in counter.most_common()
    )


def _time(record: TraceRecord) -> str:
    return record.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")


def _policy_line(use: PolicyUse) -> str:
    head = f"{use.name} {use.version} sha256 {use.sha256[:12]} ({use.path}): {use.count}"
    if use.current:
        return f"{head} - the file's current content"
    if use.current_sha256 is None:
        return f"{head} - current file not found, cannot compare"
    return f"{head} - NOT the current content (now sha256 {use.current_sha256[:12]})"


def _record_line(record: TraceRecord) -> str:
    who = record.model_label or "facts given directly"
    return (
        f"{record.decision_id} {_time(record)} {who} catalog={record.facts.get('catalog')} "
        f"rule={record.rule or '(default)'} [{record.file}:{record.line}]"
    )


def _listed(title: str, records: tuple[TraceRecord, ...]) -> list[str]:
    if not records:
        return [f"{title}: none"]
    lines = [f"{title} ({len(records)}):"]
    lines += [f"  {_record_line(r)}" for r in records[:SHOWN]]
    if len(records) > SHOWN:
        lines.append(f"  ... and {len(records) - SHOWN} more (see --json)")
    return lines


def render_text(summary: AuditSummary) -> str:
    records, total = summary.records, len(summary.records) or 1
    span = f", {_time(records[0])} .. {_time(records[-1])}" if records else ""
    lines = [
        f"{len(records)} decision(s){span}; {len(summary.malformed)} malformed line(s) skipped"
    ]
    lines += [
        f"lanes:    {_counts(summary.lanes, total)}",
        f"rules:    {_counts(summary.rules, total)}",
        f"sources:  {_counts(summary.sources, total)}",
        f"models:   {_counts(summary.models, total)}",
        "policies:",
        *(f"  {_policy_line(use)}" for use in summary.policies),
    ]
    lines += _listed("decided under a policy other than the current file", summary.stale)
    lines += _listed(
        "native lane for models the catalog calls no_vision or unknown", summary.unconfirmed_native
    )
    warned = sum(1 for r in records if r.warnings)
    lines.append(f"warnings ({warned} decision(s)):" if warned else "warnings: none")
    lines += [f"  {count}x {text}" for text, count in summary.warnings.most_common()]
    for title, counter in (("execution", summary.execution), ("sanitizer", summary.sanitizer)):
        if counter:
            lines.append(f"{title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counter.items())))
    if summary.malformed:
        lines.append("malformed lines:")
        lines += [f"  {item}" for item in summary.malformed]
    return "\n".join(lines)


def render_json(summary: AuditSummary) -> str:
    def ids(records: tuple[TraceRecord, ...]) -> list[dict[str, Any]]:
        return [{"decision_id": r.decision_id, "file": r.file, "line": r.line} for r in records]

    document = {
        "version": 1,
        "decisions": len(summary.records),
        "first": _time(summary.records[0]) if summary.records else None,
        "last": _time(summary.records[-1]) if summary.records else None,
        "lanes": dict(summary.lanes),
        "rules": dict(summary.rules),
        "sources": dict(summary.sources),
        "models": dict(summary.models),
        "policies": [{**vars(use), "current": use.current} for use in summary.policies],
        "stale_policy": ids(summary.stale),
        "unconfirmed_native": ids(summary.unconfirmed_native),
        "warnings": dict(summary.warnings),
        "execution": dict(summary.execution),
        "sanitizer": dict(summary.sanitizer),
        "malformed": [vars(item) for item in summary.malformed],
    }
    return json.dumps(document, indent=2)


_LANE_WORDS = {
    "native": "the native lane: the pixels were attached to the conversation",
    "text": "the text lane: the pixels were kept out of the conversation",
}


def _subject(record: TraceRecord) -> str:
    source = record.data.get("source")
    images = f"images from `{source}`" if source else "images"
    provider, model = record.data.get("provider"), record.data.get("model")
    if provider or model:
        return f"{images} for model `{model}` of provider `{provider}`"
    return f"{images} (facts given directly, no provider or model)"


def _why(record: TraceRecord) -> str:
    reason = record.data.get("reason") or "no reason recorded"
    if record.rule is None:
        return f"Why: no rule matched these facts, so the policy's default lane applied ({reason})."
    return f"Why: rule `{record.rule}` decided: {reason}."


def _matched(record: TraceRecord) -> str:
    matched = [str(m) for m in record.data.get("matched") or []]
    if not matched:
        return "Rules that matched: none."
    if matched == [record.rule]:
        return f"Rules that matched: only `{record.rule}`."
    others = ", ".join(f"`{m}`" for m in matched)
    return f"Rules that matched, in order: {others} (the first decides under `first`)."


def _policy(record: TraceRecord, override: str | None) -> str:
    policy = record.policy
    sha, path = str(policy.get("sha256", "?")), str(policy.get("path", "?"))
    head = (
        f"Policy: `{policy.get('name', '?')}` version {policy.get('version', '?')}, "
        f"sha256 {sha[:12]}, file {path}"
    )
    current = current_policy_sha(path, override)
    if current is None:
        return f"{head}; the file cannot be found now, so it cannot be compared."
    if current == sha:
        return f"{head}; the file still has this content."
    return f"{head}; the file has changed since (now sha256 {current[:12]})."


def _sections(record: TraceRecord) -> list[str]:
    lines = []
    execution = record.data.get("execution")
    if isinstance(execution, dict) and execution:
        lines += _execution_words(execution)
    sanitizer = record.data.get("sanitizer")
    if isinstance(sanitizer, dict) and sanitizer:
        lines.append("Sanitizer: " + _sanitizer_words(sanitizer) + ".")
    warnings = record.warnings
    lines.append("Warnings: " + ("; ".join(warnings) if warnings else "none."))
    return lines


def _execution_words(execution: dict[str, Any]) -> list[str]:
    """What the adapter did, in words: each image attached, refused or described."""
    lines = [f"Execution: {execution.get('action', 'carried out')}."]
    for image in _entries(execution, "attached"):
        if isinstance(image, dict):
            lines.append(
                f"  image {image.get('index')} attached: {_size(image.get('original_size'))} "
                f"{image.get('source_media_type', '?')} sent as {_size(image.get('size'))} "
                f"{image.get('media_type', '?')}, {image.get('bytes_before', '?')} -> "
                f"{image.get('bytes_after', '?')} bytes"
            )
    for image in _entries(execution, "refused"):
        if isinstance(image, dict):
            lines.append(f"  image {image.get('index')} not attached: {image.get('reason')}")
    for image in _entries(execution, "described"):
        if isinstance(image, dict):
            status = "described" if image.get("ok", True) else "not described"
            detail = image.get("backend") or image.get("reason") or ""
            lines.append(
                f"  image {image.get('index')} {status}" + (f" ({detail})" if detail else "")
            )
    for path in _entries(execution, "media_paths"):
        lines.append(f"  MEDIA:{path}")
    listed = ("action", "attached", "refused", "described", "media_paths")
    scalars = {
        key: value
        for key, value in execution.items()
        if not (key in listed and isinstance(value, list))
        and key != "action"
        and isinstance(value, str | int | float | bool)
    }
    if scalars:
        lines.append("  " + ", ".join(f"{key}={value}" for key, value in scalars.items()))
    return lines


def _entries(execution: dict[str, Any], key: str) -> list[Any]:
    """A list-valued field of an execution record (other shapes are shown as plain values)."""
    value = execution.get(key)
    return value if isinstance(value, list) else []


def _size(size: Any) -> str:
    if isinstance(size, list) and len(size) == 2:
        return f"{size[0]}x{size[1]}"
    return "?"


def _sanitizer_words(sanitizer: dict[str, Any]) -> str:
    parts = []
    for surface, kinds in sanitizer.items():
        if isinstance(kinds, dict):
            counts = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in kinds.items())
            parts.append(f"{surface}: {counts}")
    return "; ".join(parts) or "nothing"


def explain_record(record: TraceRecord, policy_override: str | None = None) -> str:
    """One decision in plain words, for an auditor who has never read the policy."""
    provenance = record.data.get("provenance") or {}
    lines = [
        f"Decision {record.decision_id} ({record.file} line {record.line})",
        f"At {record.timestamp.strftime('%Y-%m-%d %H:%M:%S')} UTC, {_subject(record)} took "
        f"{_LANE_WORDS[record.lane]}.",
        _why(record),
        "Facts:",
    ]
    for name in FACT_NAMES:
        where = provenance.get(name) if isinstance(provenance, dict) else None
        lines.append(f"  {name} = {record.facts[name]}" + (f"  ({where})" if where else ""))
    if record.lane == "native" and record.facts.get("catalog") in ("no_vision", "unknown"):
        lines.append(
            "Note: the catalog does not confirm this model reads images, yet pixels "
            "were attached (the mode or the policy allowed it)."
        )
    lines += [_matched(record), _policy(record, policy_override), *_sections(record)]
    return "\n".join(lines)
