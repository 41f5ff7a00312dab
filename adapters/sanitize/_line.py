"""A server's words made fit for one line of an error message, a reason or a note.

Error messages, backend reasons and stderr lines are shown on terminals and recorded, so they
get the strictest cleaning whatever the policy says: every tag character (flags included),
bidi control and zero-width character goes, `MEDIA:` lines are marked, every other control,
format or unassigned character becomes a space, and the result is one clipped line.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from visiongate.engine import SanitizeSettings

from ._media import mark_unverified_media
from ._text import clean_text, compile_text_rules

__all__ = ["STRICT", "untrusted_line"]

STRICT: Final = SanitizeSettings(allowed_flag_tags=(), strip_bidi=True, strip_zero_width=True)
_RULES: Final = compile_text_rules(STRICT)
_INVISIBLE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
# Only the start of a long message is looked at, so the work stays bounded by `limit`.
_READ_FACTOR: Final = 4


def untrusted_line(text: str, limit: int = 300) -> str:
    """`text` cleaned, `MEDIA:`-marked, squeezed onto one line and clipped to `limit`."""
    cleaned, _ = clean_text(text[: limit * _READ_FACTOR], _RULES)
    marked, _ = mark_unverified_media(cleaned)
    visible = "".join(
        " " if unicodedata.category(char) in _INVISIBLE_CATEGORIES else char for char in marked
    )
    line = " ".join(visible.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
