"""Mark `MEDIA:` lines that did not come from the router, whatever a consumer calls a line.

Agent surfaces attach the file named by a line that starts with `MEDIA:`. Only the router
writes such lines for files it cached; one in a server's (or a backend's) text is marked
`[unverified] ` so no surface takes it for the router's. A consumer may split lines on any
Unicode rule (`str.splitlines()` splits on CR, VT, FF, FS/GS/RS, NEL, U+2028 and U+2029, not
only LF), may strip leading spaces and invisible characters, and may compare leniently (case,
compatibility forms such as `ＭＥＤＩＡ：`, a zero-width space inside the word). So a line start
here is the text start or the position after any control character or line/paragraph
separator; leading spaces, format characters and default-ignorable characters are skipped;
and the word is compared after dropping invisible characters, NFKD, combining marks and
case. Marking too much only adds a harmless prefix; marking too little lets a server name a
file. The work is linear in the text: a regex finds line starts whose first visible
character can begin an `m`, and only those are checked in Python.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from ._media_tables import (
    DEFAULT_IGNORABLE_RANGES,
    LEADING_RANGES,
    M_START_RANGES,
    SEPARATOR_RANGES,
    Ranges,
    folded,
)

__all__ = ["MEDIA_WORD", "UNVERIFIED", "mark_unverified_media"]

MEDIA_WORD: Final = "media:"
"""The tag, as `folded` spells it."""
UNVERIFIED: Final = "[unverified] "


def _char_class(ranges: Ranges) -> str:
    return "".join(
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        for low, high in ranges
    )


_SEPARATORS: Final = _char_class(SEPARATOR_RANGES)
_CANDIDATE: Final = re.compile(
    f"(?:\\A|(?<=[{_SEPARATORS}]))[{_char_class(LEADING_RANGES)}]*(?=[{_char_class(M_START_RANGES)}])"
)
# Inside the word only invisible characters are dropped (a space there ends the word).
_IGNORABLE: Final = re.compile(f"[{_char_class(DEFAULT_IGNORABLE_RANGES)}]")


def mark_unverified_media(text: str) -> tuple[str, int]:
    """`text` with `[unverified] ` before every `MEDIA:` a consumer could read at a line start.

    Returns the marked text and how many marks were added; `text` itself when none were.
    The mark goes right before the word, after any leading spaces or invisible characters,
    so the line can no longer start with `MEDIA:` whatever a consumer strips from its start.
    """
    pieces: list[str] = []
    last = 0
    for match in _CANDIDATE.finditer(text):
        word = match.end()
        if reads_as_media(text, word):
            pieces += (text[last:word], UNVERIFIED)
            last = word
    if not pieces:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), len(pieces) // 2


def reads_as_media(text: str, start: int) -> bool:
    """Whether `text` at `start` spells `media:` once invisible characters, compatibility
    forms, combining marks and case are set aside."""
    seen = ""
    index = start
    while len(seen) < len(MEDIA_WORD) and index < len(text):
        char = text[index]
        index += 1
        if _is_invisible(char):
            continue
        seen += folded(char)
        if not MEDIA_WORD.startswith(seen[: len(MEDIA_WORD)]):
            return False
    return seen.startswith(MEDIA_WORD)


def _is_invisible(char: str) -> bool:
    return unicodedata.category(char) == "Cf" or _IGNORABLE.match(char) is not None
