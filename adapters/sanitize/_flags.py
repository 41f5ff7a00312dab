"""Emoji tag sequences (the flags of England, Scotland, Wales): their base, their end, and the
tag characters that spell one.

Apart from the character tables (`_invisible`) on purpose: a `Sanitizer` checks its allowed
flags with `tag_sequence` when it is made, and a proxy makes one to clean its ASCII handshake
long before any text needs those tables (issue 37).
"""

from __future__ import annotations

from typing import Final

__all__ = ["BLACK_FLAG", "CANCEL_TAG", "tag_sequence"]

BLACK_FLAG: Final = "\U0001f3f4"
"""WAVING BLACK FLAG, the base of every emoji tag sequence (UTS #51 Annex C)."""
CANCEL_TAG: Final = "\U000e007f"
"""Ends an emoji tag sequence."""


def tag_sequence(tag_text: str) -> str:
    """The tag characters spelling `tag_text`, plus CANCEL TAG (`gbeng` → U+E0067 … U+E007F)."""
    if not tag_text or not all(" " <= char <= "~" for char in tag_text):
        raise ValueError(f"allowed flag tag `{tag_text}` is not printable ascii")
    return "".join(chr(0xE0000 + ord(char)) for char in tag_text) + CANCEL_TAG
