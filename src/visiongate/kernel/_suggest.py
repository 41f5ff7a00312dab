"""`did you mean …?`: the one suggestion every layer makes (engine, adapters, command line).

A leaf module, importing nothing of visiongate's and nothing slow (not cerberus, and not
`difflib` before a suggestion is asked for), so the command line, the gate and the adapters'
argument checks share it at no cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

__all__ = ["CUTOFF", "closest", "did_you_mean", "similarity"]

CUTOFF: Final = 0.6
"""How alike (`similarity`) a word and a choice must be for the choice to be suggested."""


def closest(word: object, choices: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The choice most like `word`, if it is at least `cutoff` alike, else None."""
    import difflib  # here: most commands suggest nothing (1 ms of a `decide`, issue 37)

    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=cutoff)
    return close[0] if close else None


def similarity(first: str, second: str) -> float:
    """How alike two words are, from 0 to 1 (difflib's ratio: twice the matched characters
    over the characters of both)."""
    import difflib

    return difflib.SequenceMatcher(None, first, second).ratio()


def did_you_mean(word: object, choices: Sequence[str]) -> str:
    """`did you mean `x`?` for the closest choice, or a list of the valid ones."""
    close = closest(word, choices)
    if close is not None:
        return f"did you mean `{close}`?"
    listed = ", ".join(f"`{choice}`" for choice in choices)
    return f"expected one of {listed}"
