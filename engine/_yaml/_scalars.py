"""The pieces of the YAML loader that do not depend on document structure: its bounds, its
tags and its diagnostics. PyYAML is not imported here (`_reader` reads scalars with it): these
are what the engine needs where a policy recalled from the compile cache is never parsed."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Final

from visiongate.kernel._display import one_line
from visiongate.kernel._errors import VisiongateError

from .._diagnostics import Diagnostic, Location

DocumentPath = tuple[str | int, ...]

_TAG: Final = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (f"{_TAG}{name}" for name in ("str", "int", "float", "bool", "null"))
MERGE, SEQ, MAP = f"{_TAG}merge", f"{_TAG}seq", f"{_TAG}map"
SCALAR_TAGS: Final = frozenset({STR, INT, FLOAT, BOOL, NULL})
NUMBER_TAGS: Final = frozenset({INT, FLOAT})

# The plain scalars YAML 1.1 reads as booleans although a word was likely meant.
BOOLEAN_TRAPS: Final = frozenset(
    {"y", "yes", "n", "no", "on", "off"}
    | {"Y", "Yes", "YES", "N", "No", "NO", "On", "ON", "Off", "OFF"}
)


@dataclass(frozen=True)
class YamlLimits:
    """Bounds on one YAML document; each is far above what a real policy or config needs."""

    max_bytes: int = 8 * 1024 * 1024
    max_depth: int = 64
    """Nesting of lists and mappings."""
    max_string: int = 65_536
    """Characters in one scalar."""
    max_items: int = 10_000
    """Items in one list, keys in one mapping."""
    max_values: int = 250_000
    """Values in the document, every alias counted as the values it expands to."""
    max_alias_values: int = 20_000
    """Values produced by expanding aliases, all aliases together."""
    max_number_chars: int = 64


DEFAULT_LIMITS: Final = YamlLimits()


class LoadAbort(VisiongateError):
    """A problem after which nothing more can be read (a bound, a syntax error)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def shown(value: object, limit: int = 60) -> str:
    """A value as it may appear inside backticks in a one-line message: short, one line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # Invisible and control characters are shown as escapes, never passed through.
        return one_line(value, limit, unprintable="escape", backticks=True)
    if value is None:
        text = "null"
    else:
        # reprlib stops at a few levels and items: a huge nested value is never rendered whole.
        bounded = reprlib.Repr()
        bounded.maxlevel, bounded.maxlist, bounded.maxdict = 3, 6, 4
        bounded.maxstring = bounded.maxother = limit
        text = bounded.repr(value)
    return one_line(text, limit, unprintable="escape", backticks=True)


# -- diagnostics ---------------------------------------------------------------------------------


def problem(
    code: str, message: str, location: Location, help_text: str = "", path: DocumentPath = ()
) -> Diagnostic:
    return Diagnostic(code, "error", message, location, path, help=help_text)


def too_large(what: str, location: Location) -> Diagnostic:
    help_text = "split the value or shorten it; these bounds keep loading fast and safe"
    return problem("too-large", what, location, help_text)


def too_deep(limit: int, location: Location) -> Diagnostic:
    message = f"values nested more than {limit} levels deep"
    return problem("too-deep", message, location, "a policy needs a few levels; flatten this value")


def bad_tag(tag: str | None, location: Location) -> Diagnostic:
    name = shown(tag).replace(_TAG, "!!")
    return problem(
        "yaml-tag",
        f"the tag `{name}` is not supported",
        location,
        "remove the tag: only strings, numbers, booleans, lists and mappings are read",
    )


def bad_value(text: str, tag: str, location: Location) -> Diagnostic:
    return problem(
        "yaml-tag",
        f"`{shown(text)}` is not a valid `{tag.replace(_TAG, '!!')}`",
        location,
        "remove the tag, or write a value of that type",
    )
