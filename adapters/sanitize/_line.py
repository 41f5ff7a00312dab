"""A server's words made fit for one line of an error message, a reason or a note.

Error messages, backend reasons and stderr lines are shown on terminals and recorded, so they
get the strictest cleaning whatever the policy says: every invisible channel is stripped (flags
included), `MEDIA:` lines are marked, every other control, format, invisible or unassigned
character becomes a space, and the result is one clipped line
(`visiongate.kernel._display.one_line`).
"""

from __future__ import annotations

from functools import cache
from typing import Final

from visiongate.engine import SanitizeSettings
from visiongate.kernel._display import one_line

from ._media import mark_unverified_media
from ._text import TextRules, clean_text, compile_text_rules

__all__ = ["STRICT", "untrusted_line"]

STRICT: Final = SanitizeSettings(allowed_flag_tags=())
# Only the start of a long message is cleaned, so the work stays bounded by `limit`.
_READ_FACTOR: Final = 4


def untrusted_line(text: str, limit: int = 300) -> str:
    """`text` cleaned, `MEDIA:`-marked, squeezed onto one line and clipped to `limit`."""
    head = text[: limit * _READ_FACTOR]
    cleaned, _ = (head, ()) if head.isascii() else clean_text(head, _strict_rules())
    marked, _ = mark_unverified_media(cleaned)
    return one_line(marked, limit, unprintable="space")


@cache
def _strict_rules() -> TextRules:
    # Compiled on the first line that is not ASCII: a process that never meets one (most
    # proxies before their first answer) does not pay for it (issue 37).
    return compile_text_rules(STRICT)
