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
file. The work is linear in the text: a regex finds the line starts followed by characters
that can spell the word, and only those are checked in Python.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Final

from ._media_tables import WORD, Ranges, folded, table

__all__ = ["MEDIA_WORD", "UNVERIFIED", "mark_unverified_media", "reads_as_media"]

MEDIA_WORD: Final = WORD
UNVERIFIED: Final = "[unverified] "
_FOLDS_KEPT: Final = 4096


def _char_class(ranges: Ranges) -> str:
    return "".join(
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}"
        for low, high in ranges
    )


def _word_pattern() -> str:
    """The six letters of `media:`, each as the class of characters that fold to it, with
    invisible characters allowed between them: a C-speed filter before the exact check."""
    invisible = f"[{_char_class(table('invisible'))}]*"
    return invisible.join(f"[{_char_class(table(letter))}]" for letter in WORD)


@cache
def _candidate() -> re.Pattern[str]:
    """A separator (consumed) and the leading run; the lookahead leaves the word for the check.
    Starting with a plain class lets the regex engine skip ahead fast; the text start is
    matched on its own (`_start`). Compiled on first need, as the other two patterns: text
    that cannot hold the word never needs them (see `mark_unverified_media`)."""
    return re.compile(f"[{_char_class(table('separators'))}]{_leading()}(?={_word_pattern()})")


@cache
def _start() -> re.Pattern[str]:
    return re.compile(f"{_leading()}(?={_word_pattern()})")


@cache
def _invisible() -> re.Pattern[str]:
    return re.compile(f"[{_char_class(table('invisible'))}]")


def _leading() -> str:
    return f"([{_char_class(table('leading'))}]*)"


_ASCII_WORD: Final = re.compile(re.escape(WORD), re.IGNORECASE | re.ASCII)
"""The word in ASCII text, which has no invisible or compatibility characters: where it is
absent, no line can read as `MEDIA:`."""


def mark_unverified_media(text: str) -> tuple[str, int]:
    """`text` with `[unverified] ` before every `MEDIA:` a consumer could read at a line start.

    Returns the marked text and how many marks were added; `text` itself when none were.
    The mark goes right before the word, after any leading spaces or invisible characters,
    so the line can no longer start with `MEDIA:` whatever a consumer strips from its start.
    """
    if text.isascii() and _ASCII_WORD.search(text) is None:
        return text, 0
    words = [match.end() for match in _candidate().finditer(text)]
    first = _start().match(text)
    if first is not None:
        words.insert(0, first.end())
    pieces: list[str] = []
    last = 0
    for word in words:
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
    window = text[start : start + len(MEDIA_WORD)]
    if window.isascii():
        # ASCII has no invisible or compatibility characters: the common case, decided at once.
        return window.lower() == MEDIA_WORD
    seen = ""
    index = start
    while len(seen) < len(MEDIA_WORD) and index < len(text):
        seen += _fold(text[index])
        index += 1
        if not MEDIA_WORD.startswith(seen[: len(MEDIA_WORD)]):
            return False
    return seen.startswith(MEDIA_WORD)


@lru_cache(maxsize=_FOLDS_KEPT)
def _fold(char: str) -> str:
    """How a lenient consumer reads `char`: nothing if invisible, else its folded form."""
    return "" if _invisible().match(char) is not None else folded(char)
