"""The pieces of the YAML loader that do not depend on document structure: its bounds, the
reading of one scalar (YAML 1.1 resolution, the core tags only) and its diagnostics."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import Any, Final

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from visiongate.kernel._display import one_line
from visiongate.kernel._errors import VisiongateError

from .._diagnostics import Diagnostic, Location

DocumentPath = tuple[str | int, ...]

_TAG: Final = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (f"{_TAG}{name}" for name in ("str", "int", "float", "bool", "null"))
MERGE, SEQ, MAP = f"{_TAG}merge", f"{_TAG}seq", f"{_TAG}map"
_SCALAR_TAGS: Final = frozenset({STR, INT, FLOAT, BOOL, NULL})
_NUMBER_TAGS: Final = frozenset({INT, FLOAT})

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


@dataclass(frozen=True)
class Scalar:
    """One scalar read: its value, and what the builder must record about it."""

    value: Any
    problem: Diagnostic | None = None
    """A non-fatal problem (a bad tag): the value is None."""
    boolean_word: str | None = None
    """`yes`/`no`/`on`/`off` as written, when YAML read a word as a boolean."""
    merge: bool = False
    """A plain `<<` (a merge key, which is refused where it is a key)."""


class ScalarReader:
    """Types scalars the way PyYAML's safe loader would, minus its traps and crashes."""

    def __init__(self, limits: YamlLimits) -> None:
        self.limits = limits
        self.resolver = Resolver()
        self.constructor = SafeConstructor()

    def read(self, event: yaml.ScalarEvent, location: Location) -> Scalar:
        text: str = event.value
        if len(text) > self.limits.max_string:
            raise LoadAbort(
                too_large(
                    f"a string of {len(text):,} characters; at most "
                    f"{self.limits.max_string:,} are read",
                    location,
                )
            )
        explicit = event.tag not in (None, "!")
        tag = event.tag if explicit else self.resolve(text, event.implicit)
        if explicit and tag not in _SCALAR_TAGS:
            return Scalar(None, bad_tag(tag, location))
        if tag not in _SCALAR_TAGS or tag == STR:
            return Scalar(text, merge=tag == MERGE)  # timestamps, `=` and `<<` stay text
        return self.typed(text, tag, explicit, location)

    def resolve(self, text: str, implicit: tuple[bool, bool]) -> str:
        """The tag YAML 1.1 gives a plain (or quoted) scalar: PyYAML's own resolver."""
        tag: str = self.resolver.resolve(  # type: ignore[no-untyped-call]  # PyYAML is untyped here
            yaml.ScalarNode, text, implicit
        )
        return tag

    def typed(self, text: str, tag: str, explicit: bool, location: Location) -> Scalar:
        implied = self.resolve(text, (True, False))
        if implied != tag and not (tag == FLOAT and implied == INT):
            return Scalar(None, bad_value(text, tag, location))
        if tag in _NUMBER_TAGS and len(text) > self.limits.max_number_chars:
            limit = self.limits.max_number_chars
            what = f"a number of {len(text):,} characters; at most {limit} are read"
            return Scalar(None, too_large(what, location))
        node = yaml.ScalarNode(tag, text)
        if tag == BOOL:
            trap = text if not explicit and text in BOOLEAN_TRAPS else None
            return Scalar(self.constructor.construct_yaml_bool(node), boolean_word=trap)
        if tag == NULL:
            return Scalar(None)
        try:
            construct = (
                self.constructor.construct_yaml_int
                if tag == INT
                else self.constructor.construct_yaml_float
            )
            return Scalar(construct(node))
        except (ValueError, IndexError):
            # The resolver's patterns admit a few spellings with no digits (`0b_`, `._`).
            return Scalar(None, bad_value(text, tag, location)) if explicit else Scalar(text)


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
