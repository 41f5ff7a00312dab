"""Images and bytes of the decisions an adapter carried out, as the audit report shows them.

A record's `execution` section says how many images the tool produced (`images_found`; a
screenshot or `vision_analyze` record has one image and no count), which were attached or
refused (lists), and the bytes before and after the image stage. The builder sums the
sections per (day, source, lane) as it sums them for the summary (numbers as they are,
lists by their length), so the report costs the hot path one dictionary more; this module
reads those sums.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._result import MediaCounts


def media_counts(sums: Mapping[str, int], decisions: int) -> MediaCounts:
    """The counts of `decisions` execution sections summed into `sums`."""
    before = sums.get("bytes_before", 0)
    # Sources of one image at a time write no `images_found`: one image per section.
    images = sums.get("images_found", decisions if before else 0)
    return MediaCounts(
        decisions,
        images,
        sums.get("attached", 0),
        sums.get("refused", 0),
        before,
        sums.get("bytes_after", 0),
    )


def first_reason(refused: Any) -> str:
    """The reason of the first refused image of a section, or a note that it has none."""
    first = refused[0] if isinstance(refused, list) and refused else None
    reason = first.get("reason") if isinstance(first, dict) else None
    return str(reason)[:200] if reason else "refused (no reason recorded)"
