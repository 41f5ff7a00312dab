"""Checks on what a policy says in words: invisible characters in its text fields, and the
settings an older policy language used (read with their old meaning, with the new spelling).

Ids are already refused by the schema (they must be plain words); every other string of a
policy reaches traces, `decide` and `explain` output and the notes a model reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from visiongate.kernel._display import unsafe_characters, visible

from ..._diagnostics import Diagnostic
from ..._settings import LEGACY_BOOLEAN_CHANNELS
from ..._yaml import DocumentPath, LoadedYaml

_SHOWN = 5


def invisible_text(loaded: LoadedYaml) -> list[Diagnostic]:
    """Each string value or key with control or invisible characters, at its place."""
    found = []
    for path, text, is_key in _strings(loaded.data, ()):
        unsafe = unsafe_characters(text)
        if not unsafe:
            continue
        shown = "".join(visible(char) for char in unsafe[:_SHOWN])
        more = "…" if len(unsafe) > _SHOWN else ""
        found.append(
            Diagnostic(
                "invisible-character",
                "warning",
                f"{'this key' if is_key else 'this text'} holds {len(unsafe)} invisible or "
                f"control character(s): `{shown}{more}`",
                loaded.location(path, key=is_key),
                path,
                help="a person reading the file does not see them, but traces, `decide` "
                "output and the model's notes carry them; delete them",
            )
        )
    return found


def _strings(value: Any, path: DocumentPath) -> Iterator[tuple[DocumentPath, str, bool]]:
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*path, key), key, True
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def deprecated_settings(loaded: LoadedYaml) -> list[Diagnostic]:
    """`sanitize.invisible.bidi` / `zero_width` as booleans: still read, now spelled as modes."""
    section = loaded.data.get("sanitize") if isinstance(loaded.data, dict) else None
    invisible = section.get("invisible") if isinstance(section, dict) else None
    if not isinstance(invisible, dict):
        return []
    found = []
    for channel in LEGACY_BOOLEAN_CHANNELS:
        value = invisible.get(channel)
        if not isinstance(value, bool):
            continue
        mode = "strip" if value else "keep"
        path = ("sanitize", "invisible", channel)
        found.append(
            Diagnostic(
                "deprecated-setting",
                "warning",
                f"`{str(value).lower()}` is the old switch for `{channel}`; it is read as `{mode}`",
                loaded.location(path),
                path,
                help=f"write `{channel}: {mode}`"
                + ("" if value else " (or delete the line: the default is now `strip`)"),
            )
        )
    return found
