"""`did you mean …?`: the one suggestion every layer makes (engine, adapters, command line).

A leaf module, importing nothing of visiongate's and nothing slow (not cerberus), so the
command line, the gate and the adapters' argument checks share it at no cost.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

__all__ = ["did_you_mean"]


def did_you_mean(word: object, choices: Sequence[str]) -> str:
    """`did you mean `x`?` for the closest choice, or a list of the valid ones."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    if close:
        return f"did you mean `{close[0]}`?"
    listed = ", ".join(f"`{choice}`" for choice in choices)
    return f"expected one of {listed}"
