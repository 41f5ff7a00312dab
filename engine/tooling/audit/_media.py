"""Images and bytes of the decisions an adapter carried out, counted for the audit report.

A record's `execution` section says how many images the tool produced (`images_found`; a
screenshot or `vision_analyze` record has one image and no count), which
were attached or refused (lists), and the bytes before and after the image stage. They are
summed per (day, source, lane) in a list of the `MediaCounts` fields, in place: the builder
calls this once per record that has an `execution`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, MutableMapping
from typing import Any, Final

FIELDS: Final = ("images_found", "attached", "refused", "bytes_before", "bytes_after")


def add_media(
    media: MutableMapping[Hashable, list[int]], key: Hashable, execution: Mapping[str, Any]
) -> str | None:
    """Add one execution section to `media[key]`; the first refusal's reason, if any."""
    counts = media.get(key)
    if counts is None:
        counts = media[key] = [0] * (len(FIELDS) + 1)
    counts[0] += 1
    for index, name in enumerate(FIELDS, start=1):
        counts[index] += count_of(execution.get(name))
    if "images_found" not in execution and count_of(execution.get("bytes_before")):
        counts[1] += 1  # the single-image sources (screenshots, vision_analyze) say no count
    refused = execution.get("refused")
    if type(refused) is list and refused:
        return reason_of(refused[0])
    return None


def count_of(value: Any) -> int:
    """An execution number (`bytes_before`) or list (`attached`) as a count; else 0."""
    kind = type(value)  # `type(...) is int` leaves booleans out
    if kind is int:
        return int(value)
    return len(value) if kind is list else 0


def reason_of(refused: Any) -> str:
    reason = refused.get("reason") if isinstance(refused, dict) else None
    return str(reason)[:200] if reason else "refused (no reason recorded)"
