"""A server's words made fit for one line of an error message, a reason or a note.

Error messages, backend reasons and stderr lines are shown on terminals and recorded, so they
get the strictest cleaning whatever the policy says: every invisible channel is stripped (flags
included), `MEDIA:` lines are marked, every other control, format, invisible or unassigned
character becomes a space, and the result is one clipped line
(`visiongate.kernel._display.one_line`).
"""

from __future__ import annotations

from typing import Final

from visiongate.engine import SanitizeSettings
from visiongate.kernel._display import one_line

from ._media import mark_unverified_media
from ._text import clean_text, compile_text_rules

__all__ = ["STRICT", "untrusted_line"]

STRICT: Final = SanitizeSettings(allowed_flag_tags=())
_RULES: Final = compile_text_rules(STRICT)
# Only the start of a long message is cleaned, so the work stays bounded by `limit`.
_READ_FACTOR: Final = 4


def untrusted_line(text: str, limit: int = 300) -> str:
    """`text` cleaned, `MEDIA:`-marked, squeezed onto one line and clipped to `limit`."""
    cleaned, _ = clean_text(text[: limit * _READ_FACTOR], _RULES)
    marked, _ = mark_unverified_media(cleaned)
    return one_line(marked, limit, unprintable="space")
