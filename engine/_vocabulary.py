"""The closed vocabulary of the gate: facts, their domains, lanes and image sources.

The engine fixes these; a policy may only refer to them. The source of an image is
deliberately not a fact: the gate must never depend on which tool produced the image.
Everything that counts or lists cells (the compiler, lint, tests, docs, diff, explain,
audit) derives from `FACTS`, so a new value here needs no change anywhere else.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Final

LANGUAGE_VERSION: Final = 2
"""The policy language version: 1 had `path` in {accepts, refuses} (36 cells); 2 adds
`unverified` (54 cells). A policy written for 1 still loads: the cells it does not name fall
to its default lane, which `lint` reports as a `gap`."""

FACTS: Final[dict[str, tuple[str, ...]]] = {
    "mode": ("auto", "native", "text"),
    "catalog": ("vision", "no_vision", "unknown"),
    "aux": ("set", "unset"),
    "path": ("accepts", "refuses", "unverified"),
}
FACT_NAMES: Final[tuple[str, ...]] = tuple(FACTS)

CELL_COUNT: Final = math.prod(len(domain) for domain in FACTS.values())
"""How many cells the input space has (54)."""

LANES: Final[tuple[str, ...]] = ("native", "text")

SOURCES: Final[tuple[str, ...]] = ("mcp", "computer_use", "browser", "vision_analyze")

# How the text lane is carried out for a source.
TEXT_ACTIONS: Final[tuple[str, ...]] = ("reference", "describe")
USER_ONLY: Final[tuple[str, ...]] = ("pass", "reference", "withhold")
"""`execution.user_only`: what becomes of tool output annotated for the user only."""

HIT_POLICIES: Final[tuple[str, ...]] = ("first", "unique")

Cell = tuple[str, str, str, str]
"""One point of the input space, in FACT_NAMES order: (mode, catalog, aux, path)."""


def all_cells() -> Iterator[Cell]:
    """Every cell of the input space (`CELL_COUNT` of them), in a stable order."""
    for values in itertools.product(*FACTS.values()):
        yield (values[0], values[1], values[2], values[3])


def cell_facts(cell: Cell) -> dict[str, str]:
    """The fact mapping of a cell."""
    return dict(zip(FACT_NAMES, cell, strict=True))


def format_cell(cell: Cell) -> str:
    """A cell as `mode=auto,catalog=vision,aux=unset,path=accepts` (the CLI's `--facts` syntax)."""
    return ",".join(f"{name}={value}" for name, value in zip(FACT_NAMES, cell, strict=True))
