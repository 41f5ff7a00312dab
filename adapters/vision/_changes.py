"""Say which lines changed since the previous screenshot of a source, so the model need not
diff two long texts itself.

The comparison is of the text lines in reading order (a line diff), whatever way the text
was read, so it holds for a full read as well as an incremental one.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Final

MOST: Final = 0.5
"""When more than this share of the lines changed, the note no longer lists them."""
SAME: Final = "same text as the previous screenshot of this source"


def change_note(
    before: Sequence[str] | None, after: Sequence[str], scroll: int | None
) -> str | None:
    """One line saying what changed from `before` to `after`; None without a `before`.

    Line numbers count from 1, as the description numbers its lines. `scroll` is how many
    pixels the content moved up (negative: down), when the reader recognised a scroll.
    """
    if before is None:
        return None
    moved = _scroll_words(scroll)
    if list(before) == list(after):
        return f"{moved}; {SAME}" if moved else SAME
    changed, gone = _diff(before, after)
    if after and len(changed) > MOST * len(after):
        summary = "most lines changed since the previous screenshot of this source"
    elif changed:
        summary = (
            f"changed since the previous screenshot of this source: {_ranges(changed)} "
            f"({len(changed)} of {len(after)} lines)"
        )
    else:
        summary = "no line is new since the previous screenshot of this source"
    if gone:
        summary += f"; {gone} line{'s' if gone != 1 else ''} of it no longer shown"
    return f"{moved}; {summary}" if moved else summary


def _diff(before: Sequence[str], after: Sequence[str]) -> tuple[list[int], int]:
    """Numbers (from 1) of the lines of `after` that are new or different, and how many
    lines of `before` have no counterpart."""
    matcher = SequenceMatcher(None, list(before), list(after), autojunk=False)
    changed: list[int] = []
    gone = 0
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            changed.extend(range(new_start + 1, new_end + 1))
        if tag in ("replace", "delete"):
            gone += max(0, (old_end - old_start) - (new_end - new_start))
    return changed, gone


def _ranges(numbers: Sequence[int]) -> str:
    """`line 4`, `lines 12–14, 30`."""
    spans: list[tuple[int, int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], number)
        else:
            spans.append((number, number))
    text = ", ".join(f"{start}–{end}" if end > start else str(start) for start, end in spans)
    single = len(spans) == 1 and spans[0][0] == spans[0][1]
    return f"line {text}" if single else f"lines {text}"


def _scroll_words(scroll: int | None) -> str:
    if not scroll:
        return ""
    direction = "down" if scroll > 0 else "up"
    return f"the view scrolled {direction} by {abs(scroll)} px"
