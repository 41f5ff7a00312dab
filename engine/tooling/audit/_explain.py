"""One decision in plain words, for an auditor who has never read the policy."""

from __future__ import annotations

from typing import Any

from visiongate.kernel._display import visible

from ..._vocabulary import FACT_NAMES
from ._policies import Standing, policy_status
from ._read import TraceRecord

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
    head = (
        f"Policy: `{policy.name}` version {policy.version}, sha256 {policy.sha256[:12]}, "
        f"{policy.origin}"
    )
    status = policy_status(policy, override)
    compared = status.compared_with
    if status.standing is Standing.NOT_FOUND:
        return f"{head}; {compared} cannot be found now, so it cannot be compared."
    if status.standing is Standing.CURRENT:
        return f"{head}; still the current content."
    current = (status.current_sha256 or "?")[:12]
    if status.standing is Standing.OTHER_RELEASE:
        return f"{head}; not compared: this installation has {compared} (sha256 {current})."
    return f"{head}; {compared} has changed since (now sha256 {current})."


def _sections(record: TraceRecord) -> list[str]:
    lines = []
    execution = record.data.get("execution")
    if isinstance(execution, dict) and execution:
        lines += _execution_words(execution)
    sanitizer = record.data.get("sanitizer")
    if isinstance(sanitizer, dict) and sanitizer:
        lines.append("Sanitizer: " + _sanitizer_words(sanitizer) + ".")
    if record.row.amended is not None:
        lines.append(f"Amended: {record.row.amended} (this record replaces the first one).")
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
    return "\n".join(visible(line) for line in lines)
