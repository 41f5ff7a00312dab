"""Reading one scalar: YAML 1.1 resolution, the core tags only (PyYAML's own resolver)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from .._diagnostics import Diagnostic, Location
from ._scalars import (
    BOOL,
    BOOLEAN_TRAPS,
    FLOAT,
    INT,
    MERGE,
    NULL,
    NUMBER_TAGS,
    SCALAR_TAGS,
    STR,
    LoadAbort,
    YamlLimits,
    bad_tag,
    bad_value,
    too_large,
)


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
        if explicit and tag not in SCALAR_TAGS:
            return Scalar(None, bad_tag(tag, location))
        if tag not in SCALAR_TAGS or tag == STR:
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
        if tag in NUMBER_TAGS and len(text) > self.limits.max_number_chars:
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
