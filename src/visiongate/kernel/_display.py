"""Text from traces, policies, configs and servers, made safe to show: one home for it.

- `visible`: for a person's terminal. Control, format, invisible, unassigned and surrogate
  characters become visible escapes (`\\x1b`, `\\r`, `<U+E0041>`), so a field cannot retitle
  the terminal, overwrite a line with a carriage return, hide text in tag characters or
  reorder what is shown with bidi controls.
- `json_text`: for `--json` output. The same characters as `\\uXXXX` escapes (the rest stays
  as it is, unlike `ensure_ascii`, so a person can still read it).
- `one_line`: squeezed onto one line and clipped, for messages, reasons and notes; the
  copies this replaces differed on purpose in what they redact and what they do with
  unprintable characters, which are its named parameters.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    import regex

__all__ = ["Unprintable", "json_text", "one_line", "unsafe_characters", "visible", "visible_lines"]

# Default_Ignorable_Code_Point holds the invisible letters and marks too (Hangul fillers,
# variation selectors), which the general categories call printable.
_UNSAFE_CLASS: Final = (
    r"[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]"
)
# `json.dumps` escapes C0 controls inside strings itself, and a line break outside one is the
# indentation: the JSON class leaves C0 alone.
_UNSAFE_IN_JSON_CLASS: Final = (
    r"[\x7f-\x9f\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]"
)


# `regex` (for its Unicode properties) is imported and the classes compiled on first use
# (~10 ms at start-up): printable ASCII, what a command line shows nearly always, needs neither.
@functools.cache
def _pattern(expression: str) -> regex.Pattern[str]:
    import regex

    return regex.compile(expression)


def _unsafe() -> regex.Pattern[str]:
    return _pattern(_UNSAFE_CLASS)


_CONTROLS: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SHORT_ESCAPES: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# Only the start of a long text is looked at, so the work stays bounded by `limit`.
_READ_FACTOR: Final = 4

Unprintable = Literal["keep", "space_controls", "space", "escape"]
"""What `one_line` does with unprintable characters: leave them (text the sanitizer already
cleaned), turn controls and line separators into spaces, turn every unprintable character
into a space, or show each as a visible escape."""


def _escape(match: re.Match[str] | regex.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    return f"\\x{code:02x}" if code < 0xA0 else f"<U+{code:04X}>"


def visible(text: str) -> str:
    """`text` with every unsafe character shown as an escape; `text` itself when it has none."""
    if text.isascii() and text.isprintable():
        return text
    return _unsafe().sub(_escape, text)


def unsafe_characters(text: str) -> str:
    """The characters of `text` `visible` would escape, line breaks and tabs aside."""
    return "".join(char for char in _unsafe().findall(text) if char not in "\n\t")


def visible_lines(text: str) -> str:
    """`text` line by line through `visible`: its own line breaks stay, nothing else."""
    return "\n".join(visible(line) for line in text.split("\n"))


def _json_escape(match: regex.Match[str]) -> str:
    encoded = match.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{encoded[i]:02x}{encoded[i + 1]:02x}" for i in range(0, len(encoded), 2))


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)` with the unsafe characters escaped.

    Every such character sits inside a JSON string (the syntax around strings is printable
    ASCII and whitespace), and `\\uXXXX` (a surrogate pair beyond the BMP) is how JSON spells
    it there. DEL is ASCII but unprintable, so even ASCII output is looked at.
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    if text.isascii() and "\x7f" not in text:  # the class's only ASCII member (C0 aside)
        return text
    return _pattern(_UNSAFE_IN_JSON_CLASS).sub(_json_escape, text)


def one_line(
    text: str,
    limit: int,
    *,
    unprintable: Unprintable = "keep",
    redact: Sequence[tuple[re.Pattern[str], str]] = (),
    backticks: bool = False,
) -> str:
    """`text` on one line of at most `limit` characters (an ellipsis marks a cut).

    `redact` substitutions run first, on the whole text (a data URL longer than the limit is
    still found); then only the first `4 * limit` characters are read. Runs of whitespace
    become one space. `backticks=True` turns backticks into quotes, for text shown inside
    backticks.
    """
    for pattern, replacement in redact:
        text = pattern.sub(replacement, text)
    text = text[: limit * _READ_FACTOR]
    if unprintable == "escape":
        text = visible(text)
    elif unprintable == "space":
        # In ASCII the unsafe class holds only the controls: no `regex` for a plain line.
        text = _CONTROLS.sub(" ", text) if text.isascii() else _unsafe().sub(" ", text)
    elif unprintable == "space_controls":
        text = _CONTROLS.sub(" ", text)
    line = " ".join(text.split())
    if backticks:
        line = line.replace("`", "'")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
