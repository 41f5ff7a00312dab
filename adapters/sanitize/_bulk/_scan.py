"""The C scanner (`_scanner.c`, optional): one pass over a text that removes every invisible
character no context can make legitimate, counted per channel (issue 37).

It settles text whose invisible characters all go or are flagged wherever they stand: smuggled
tag runs in any script, a payload woven between letters, and clean text (one pass that proves
it). It gives up (None) at the first character the walk judges by its context (a joiner, a
selector, a mark, a flag's base), and the caller takes its Python paths from the start, so
the outcome never depends on whether the module was built. Its counts come in the order the
Python paths give them: by likelihood when every active channel strips (the bulk paths'
order), in the order each channel first shows when one is `flag` (the walk's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Final

from visiongate.engine import InvisibleMode

from .._invisible import BLACK_FLAG, CONTEXTUAL, channel_chars

__all__ = ["ORDER", "SCANNER", "Scanner", "scanner_for"]


def _load() -> ModuleType | None:
    try:
        from . import _scanner
    except ImportError:  # built without a compiler (`setup.py`: the extension is optional)
        return None
    return _scanner


SCANNER: Final = _load()
"""The compiled module, or None where it was not built."""

ORDER: Final = ("tags", "zero_width", "variation_selectors", "bidi", "fillers", "other_ignorables")
"""The channels by likelihood (the bulk paths' order of counts); number `n + 1` in the table."""
_FIRST_LEVEL: Final = 0x1100
_BLOCK: Final = 256
_FLAG: Final = 0x40
_BAIL: Final = 0x80


@dataclass(frozen=True)
class Scanner:
    """The scanner compiled for one policy's modes."""

    scan: Callable[[str, bytes], tuple[str, tuple[tuple[int, int], ...]] | None]
    """The compiled module's `scan`."""
    table: bytes
    """What the scanner does with each code point (`_scanner.c` describes the layout)."""
    kinds: tuple[str, ...]
    """The tally's kind for each channel number (1 up; 0 is no channel)."""
    by_likelihood: bool
    """Whether the counts go by likelihood (no channel is `flag`), else by first showing."""

    def clean(self, text: str) -> tuple[str, tuple[tuple[str, int], ...]] | None:
        """`text` cleaned and what went (or was flagged) per kind; None when the walk must
        judge a character of it."""
        found = self.scan(text, self.table)
        if found is None:
            return None
        cleaned, counts = found
        if self.by_likelihood and len(counts) > 1:
            counts = tuple(sorted(counts))  # by channel number: by likelihood
        kinds = self.kinds
        return cleaned, tuple((kinds[number], count) for number, count in counts)


def scanner_for(
    modes: Mapping[str, InvisibleMode], kind_of: Callable[[str, InvisibleMode], str]
) -> Scanner | None:
    """The scanner for a policy's modes, `kind_of(channel, mode)` naming what the tally
    counts; None when the module is not built or every channel is `keep`."""
    if SCANNER is None or all(mode == "keep" for mode in modes.values()):
        return None
    actions: dict[int, int] = {}
    for number, channel in enumerate(ORDER, start=1):
        mode = modes[channel]
        if mode != "keep":
            flag = _FLAG if mode == "flag" else 0
            actions.update(dict.fromkeys(channel_chars(channel), number | flag))
    # What the walk judges by context: a legitimate use may stand there, or a flag's tags.
    actions.update(dict.fromkeys(CONTEXTUAL & actions.keys(), _BAIL))
    if modes["tags"] != "keep":
        actions[ord(BLACK_FLAG)] = _BAIL
    return Scanner(
        scan=SCANNER.scan,
        table=_two_levels(actions),
        kinds=("", *(kind_of(channel, modes[channel]) for channel in ORDER)),
        by_likelihood="flag" not in modes.values(),
    )


def _two_levels(actions: Mapping[int, int]) -> bytes:
    """The first level (a block number per 256 code points, 0 for the block of zeros) and the
    256 blocks after it (unused ones zero: the scanner takes exactly that size)."""
    first = bytearray(_FIRST_LEVEL)
    blocks: list[bytearray] = [bytearray(_BLOCK)]
    for code, action in sorted(actions.items()):
        high = code >> 8
        if not first[high]:
            first[high] = len(blocks)
            blocks.append(bytearray(_BLOCK))
        blocks[first[high]][code & 0xFF] = action
    blocks += [bytearray(_BLOCK)] * (_BLOCK - len(blocks))
    return bytes(first) + b"".join(blocks)
