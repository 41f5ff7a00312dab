"""Text whose only invisible characters are tag characters: the smuggling of issue 37, in any
script, cut at C speed (one `regex` substitution, or the UTF-8 bytes when tags are dense).

With no other invisible character and no WAVING BLACK FLAG (the base of every emoji tag
sequence), no tag can be part of a legitimate use: the walk would strip each one, and count
it. So the text is its characters between tags, and the count how many went.
"""

from __future__ import annotations

from functools import cache
from typing import Final

import regex

from .._invisible import BLACK_FLAG, channel_chars
from ._present import every_invisible, astral_absent
from ._utf8 import encoded

__all__ = ["strip_only_tags"]

_RUNS: Final = regex.compile("[\U000e0000-\U000e007f]+")
"""A run of tag characters: `regex` finds one range of code points several times faster
than `re`, and a substitution pays once a run."""
_SAMPLE: Final = 4096
_DENSE: Final = _SAMPLE // 64
"""More runs than this in the first characters (a tag after every letter or so): the UTF-8
bytes, where the cost follows the bytes, not the runs."""
_TAG_LEAD: Final = b"\xf3"
"""The first byte of every character from U+C0000 to U+FFFFF, tags (U+E0000-E007F) among
them; its continuation bytes cannot begin a character, so decoding with `ignore` drops them."""
_OTHER_LEADS: Final = (
    regex.compile("[\U000c0000-\U000dffff]"),
    regex.compile("[\U000e0080-\U000fffff]"),
)
"""The other characters with that first byte (one range each, for `regex`'s fast search)."""


@cache
def _others() -> frozenset[int]:
    return every_invisible() - channel_chars("tags")


def strip_only_tags(text: str) -> tuple[str, int] | None:
    """`text` without its tag characters and how many went, when the caller has shown it has
    no invisible character of the Basic Multilingual Plane; None when it may have another
    (astral) one, or a flag's base."""
    if BLACK_FLAG in text or not astral_absent(text, _others()):
        return None
    cleaned = _from_bytes(text) if len(_RUNS.findall(text, 0, _SAMPLE)) > _DENSE else None
    if cleaned is None:
        cleaned = _RUNS.sub("", text)
    return cleaned, len(text) - len(cleaned)


def _from_bytes(text: str) -> str | None:
    data = encoded(text)
    if data is None or any(lead.search(text) for lead in _OTHER_LEADS):
        return None
    return data.translate(None, _TAG_LEAD).decode("utf-8", "ignore")
