"""Tag characters cut at C speed, in any script (issue 37): one `regex` substitution, which
pays once a run, or the UTF-8 bytes when tags are dense (a tag after every letter).

`_text` uses it on text with no WAVING BLACK FLAG (the base of every emoji tag sequence), so
that no tag can be part of a legitimate use: when the text without them holds no other
invisible character, the walk would have stripped each tag, and counted it, and nothing else.
"""

from __future__ import annotations

from typing import Final

import regex

from ._utf8 import encoded

__all__ = ["strip_tags"]

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


def strip_tags(text: str) -> str:
    """`text` without its tag characters (U+E0000-E007F)."""
    if len(_RUNS.findall(text, 0, _SAMPLE)) > _DENSE:
        cleaned = _from_bytes(text)
        if cleaned is not None:
            return cleaned
    return _RUNS.sub("", text)


def _from_bytes(text: str) -> str | None:
    data = encoded(text)
    if data is None or any(lead.search(text) for lead in _OTHER_LEADS):
        return None
    return data.translate(None, _TAG_LEAD).decode("utf-8", "ignore")
