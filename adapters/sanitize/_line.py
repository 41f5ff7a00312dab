"""A server's words made fit for one line of an error message, a reason or a note.

Error messages, backend reasons and stderr lines are shown on terminals and recorded, so they
get the strictest cleaning whatever the policy says: every invisible channel is stripped (flags
included), `MEDIA:` lines are marked, every other control, format, invisible or unassigned
character becomes a space, and the result is one clipped line
(`visiongate.kernel._display.one_line`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Final

from visiongate.engine import SanitizeSettings
from visiongate.kernel._display import one_line

from ._media import mark_unverified_media

if TYPE_CHECKING:
    from ._text import Counts, TextRules

__all__ = ["STRICT", "untrusted_line"]

STRICT: Final = SanitizeSettings(allowed_flag_tags=())
# Only the start of a long message is cleaned, so the work stays bounded by `limit`.
_READ_FACTOR: Final = 4


def untrusted_line(text: str, limit: int = 300) -> str:
    """`text` cleaned, `MEDIA:`-marked, squeezed onto one line and clipped to `limit`."""
    head = text[: limit * _READ_FACTOR]
    cleaned, _ = (head, ()) if head.isascii() else _cleaned(head)
    marked, _ = mark_unverified_media(cleaned)
    return one_line(marked, limit, unprintable="space")


def _cleaned(text: str) -> tuple[str, Counts]:
    from ._text import clean_text

    return clean_text(text, _strict_rules())


@cache
def _strict_rules() -> TextRules:
    # Compiled, and its modules imported, on the first line that is not ASCII: a process that
    # never meets one (most proxies before their first answer) does not pay for it (issue 37).
    from ._text import compile_text_rules

    return compile_text_rules(STRICT)
