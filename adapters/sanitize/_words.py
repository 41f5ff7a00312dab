"""One-bit-per-letter codes in marks that real text uses too, and combining-mark floods (issue
36, item 13).

A ZWNJ between two Persian letters, a ZWJ or ZWNJ after a virama, an LRM or RLM after an
Arabic word and a soft hyphen inside a word are each legitimate somewhere, so a payload can
put one (or none) at every letter and pass as text. The Unicode data says where such a mark
can change anything, and real text says how densely it stands:

- ZWNJ and ZWJ between letters of a joining script change the shaping only next to a letter
  that can join across them (Joining_Type D, L or C before, D, R or C after, transparent
  marks skipped); a ZWNJ between two letters neither of which can is removed. A ZWNJ after a
  virama matters only before a letter (it asks for the explicit virama of a conjunct).
- Real text needs a joiner at a morpheme boundary (`کتاب‌خانه‌ها`, `क्‍ष`), never two within
  one letter of each other, nor more than three in a word: a word where they stand so close
  is a code, and every joiner in it goes.
- A soft hyphen marks where a word may break; hyphenation never leaves fewer than two
  letters on either side (`Silben­trennung`), so a word with a piece of one letter between
  soft hyphens, or at its edge, is a code, and every soft hyphen in it goes.
- LRM, RLM and ALM change the display only where the bidi algorithm resolves something
  differently with them: a mark whose nearest strong neighbours on each side resolve the
  neutrals between them the same way with and without it (rule N1 of UAX #9, the paragraph's
  direction for its edges) is removed; next to a number, a separator, an explicit embedding or
  isolate, or as the paragraph's first strong character, it is kept.

What stays possible is a mark wherever it changes the rendering and real text is that dense:
about one bit per word with a joiner or a soft hyphen (its presence, at a position of the
writer's choosing among those the rules allow), and an LRM after a right-to-left word followed
by another in a left-to-right paragraph.

A flood of combining marks (hundreds on one base, drawn as a tall smear and read as a payload)
is cut to 30 non-starters in a row, the bound of Unicode's Stream-Safe Text Format (UAX #15).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import Final

import regex

__all__ = ["FLOOD_LIMIT", "cap_floods", "joiner_in_a_code", "mark_changes_nothing", "may_flood"]

ZWNJ: Final = "\u200c"
ZWJ: Final = "\u200d"
SOFT_HYPHEN: Final = "\u00ad"
_REACH: Final = 32
"""How far a look at a word or a mark's neighbours goes, so hostile text costs no more."""
_MOST_JOINERS: Final = 3

_JOINS_FOLLOWING: Final = regex.compile(r"[\p{jt=D}\p{jt=L}\p{jt=C}]")
_JOINS_PRECEDING: Final = regex.compile(r"[\p{jt=D}\p{jt=R}\p{jt=C}]")
_JOINING: Final = regex.compile(r"[\p{jt=D}\p{jt=L}\p{jt=R}\p{jt=C}]")
_TRANSPARENT: Final = regex.compile(r"\p{jt=T}")
_LETTER: Final = regex.compile(r"\p{L}")
_WORD: Final = regex.compile(r"[\p{L}\p{M}\u200c\u200d\u00ad]")
_YEH: Final = frozenset("\u06cc\u064a\u06d0\u06cd")
_VIRAMA: Final = regex.compile(r"\p{ccc=9}")
_JOINED_VIRAMA: Final = regex.compile(r"\u200d\p{ccc=9}|\p{ccc=9}[\u200c\u200d]")


def joiner_in_a_code(text: str, index: int) -> bool:
    """Whether the ZWNJ, ZWJ or soft hyphen at `index`, legitimate by its two neighbours, is
    removable all the same: it changes no shaping there, or its word (or, after a virama, its
    paragraph) holds them too densely."""
    char = text[index]
    if char == SOFT_HYPHEN:
        return _word_is_a_code(text, index, (SOFT_HYPHEN,), edges=2, inner=2)
    joining = _between_joining_letters(text, index)
    if joining is None:
        return _virama_joiners_are_a_code(text, index)
    if char == ZWNJ and not joining:
        return True  # no letter joins across it: it changes no shape
    return _word_is_a_code(text, index, (ZWNJ, ZWJ), edges=2, inner=2)


def _between_joining_letters(text: str, index: int) -> bool | None:
    """None when the joiner is not between letters of a joining script (a virama's, judged by
    its own rule); else whether a letter on either side joins across it."""
    before = _nearest_not_transparent(text, index, -1)
    after = _nearest_not_transparent(text, index, 1)
    if before is None or after is None or not (_JOINING.match(before) or _JOINING.match(after)):
        return None
    return _JOINS_FOLLOWING.match(before) is not None or _JOINS_PRECEDING.match(after) is not None


def _nearest_not_transparent(text: str, index: int, step: int) -> str | None:
    position = index + step
    for _ in range(_REACH):
        if not 0 <= position < len(text):
            return None
        if _TRANSPARENT.match(text[position]) is None:
            return text[position] if _LETTER.match(text[position]) else None
        position += step
    return None


def _word_is_a_code(
    text: str, index: int, family: tuple[str, ...], *, edges: int, inner: int
) -> bool:
    """Whether the word around `index` holds marks of `family` closer than real text does:
    a piece of fewer than `inner` letters between two of them, of fewer than `edges` between
    one and the word's edge (a Yeh alone after the last: the Persian ezafe), or more than
    three of them (soft hyphens aside: a word may break at every syllable)."""
    word = _word_around(text, index)
    pieces = [sum(1 for char in piece if _LETTER.match(char)) for piece in _split(word, family)]
    if len(pieces) - 1 > _MOST_JOINERS and family != (SOFT_HYPHEN,):
        return True
    last = _split(word, family)[-1]
    ezafe = pieces[-1] == 1 and last.strip("\u064b-\u065f") in _YEH
    if pieces[0] < edges or (pieces[-1] < edges and not ezafe):
        return True
    return any(letters < inner for letters in pieces[1:-1])


def _split(word: str, family: tuple[str, ...]) -> list[str]:
    for char in family[1:]:
        word = word.replace(char, family[0])
    return word.split(family[0])


def _word_around(text: str, index: int) -> str:
    start, end = index, index + 1
    while start > 0 and index - start < _REACH * 4 and _WORD.match(text[start - 1]):
        start -= 1
    while end < len(text) and end - index < _REACH * 4 and _WORD.match(text[end]):
        end += 1
    return text[start:end]


def _virama_joiners_are_a_code(text: str, index: int) -> bool:
    """Real text asks for a half form or an explicit virama now and then; a paragraph with a
    joiner after a third of its viramas or more, four times or more, is a code."""
    starts, _ = _paragraphs(text)
    found = bisect_right(starts, index) - 1
    viramas, joined = _virama_counts(text)[found]
    return joined >= _MOST_JOINERS + 1 and 3 * joined >= viramas


@lru_cache(maxsize=8)
def _virama_counts(text: str) -> list[tuple[int, int]]:
    _, paragraphs = _paragraphs(text)
    return [
        (len(_VIRAMA.findall(text, low, high)), len(_JOINED_VIRAMA.findall(text, low, high)))
        for low, high, *_ in paragraphs
    ]


_STRONG: Final = regex.compile(r"(\p{bc=L})|[\p{bc=R}\p{bc=AL}]")
_NEUTRAL: Final = regex.compile(r"[\p{bc=WS}\p{bc=ON}\p{bc=S}\p{bc=BN}]")
_EXPLICIT: Final = regex.compile(
    r"[\p{bc=LRE}\p{bc=RLE}\p{bc=LRO}\p{bc=RLO}\p{bc=PDF}\p{bc=LRI}\p{bc=RLI}\p{bc=FSI}\p{bc=PDI}]"
)
_PARAGRAPH_END: Final = re.compile("[\n\r\x1c-\x1e\x85\u2029]")
_MARK_DIRECTIONS: Final = {"\u200e": "L", "\u200f": "R", "\u061c": "R"}


def mark_changes_nothing(text: str, index: int) -> bool:
    """Whether the LRM, RLM or ALM at `index` leaves every character's resolved direction as it
    would be without it (then it is removable)."""
    start, end, direction, first_strong, explicit = _paragraph_at(text, index)
    if explicit or first_strong == index:
        return False
    mark = _MARK_DIRECTIONS[text[index]]
    before, left = _strong_neighbour(text, index, -1, start, end)
    after, right = _strong_neighbour(text, index, 1, start, end)
    if before == "?" or after == "?":
        return False  # a number, a separator or a mark next to it: the weak rules may change
    a, b = before or direction, after or direction
    without = a if a == b else direction
    left_same = not left or (a if a == mark else direction) == without
    right_same = not right or (mark if mark == b else direction) == without
    return left_same and right_same


def _strong_neighbour(
    text: str, index: int, step: int, start: int, end: int
) -> tuple[str | None, int]:
    """The direction of the nearest strong character (None: the paragraph's edge; `?`: a
    character whose resolution depends on more than N1) and the neutrals passed on the way."""
    neutrals, position = 0, index + step
    for _ in range(_REACH):
        if not start <= position < end:
            return None, neutrals
        char = text[position]
        strong = _STRONG.match(char)
        if strong is not None:
            return ("L" if strong.group(1) else "R"), neutrals
        if _NEUTRAL.match(char) is None:
            return "?", neutrals
        neutrals += 1
        position += step
    return "?", neutrals


def _paragraph_at(text: str, index: int) -> _Paragraph:
    """The paragraph holding `index`: its bounds, its direction (rules P2-P3), where its first
    strong character is, and whether it has explicit embeddings or isolates."""
    starts, paragraphs = _paragraphs(text)
    return paragraphs[bisect_right(starts, index) - 1]


_Paragraph = tuple[int, int, str, int, bool]


@lru_cache(maxsize=8)
def _paragraphs(text: str) -> tuple[list[int], list[_Paragraph]]:
    # Computed once per text: a payload of a mark after every word must not rescan its
    # paragraph at every mark.
    bounds: list[tuple[int, int]] = []
    start = 0
    for found in _PARAGRAPH_END.finditer(text):
        bounds.append((start, found.end()))
        start = found.end()
    bounds.append((start, len(text)))
    paragraphs: list[_Paragraph] = []
    for low, high in bounds:
        strong = _STRONG.search(text, low, high)
        direction = "L" if strong is None or strong.group(1) else "R"
        first = strong.start() if strong is not None else -1
        explicit = _EXPLICIT.search(text, low, high) is not None
        paragraphs.append((low, high, direction, first, explicit))
    return [low for low, _ in bounds], paragraphs


FLOOD_LIMIT: Final = 30
"""Non-starters in a row that Unicode's Stream-Safe Text Format allows (UAX #15)."""
_NON_STARTER: Final = regex.compile(r"\P{ccc=0}")
_FLOOD: Final = regex.compile(r"\P{ccc=0}{" + str(FLOOD_LIMIT + 1) + ",}")


def may_flood(text: str) -> bool:
    """False when `text` can hold no run of more than `FLOOD_LIMIT` non-starters: such a run
    covers one of every `FLOOD_LIMIT + 1` characters, so a look at those suffices."""
    return _NON_STARTER.search(text[:: FLOOD_LIMIT + 1]) is not None


def cap_floods(text: str) -> tuple[str, int]:
    """`text` with each run of non-starters cut to `FLOOD_LIMIT`, and how many went."""
    removed = 0

    def cut(found: regex.Match[str]) -> str:
        nonlocal removed
        removed += len(found.group()) - FLOOD_LIMIT
        return found.group()[:FLOOD_LIMIT]

    capped = _FLOOD.sub(cut, text)
    return (capped, removed) if removed else (text, 0)
