"""A parsed YAML document with the location of every node: what every stage after the
parser reads, from a fresh parse or (a policy) from the compile cache."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._diagnostics import Diagnostic, Location
from ._scalars import DocumentPath


@dataclass(frozen=True)
class LoadedYaml:
    """A parsed document with the location of every value and every mapping key."""

    data: Any
    file: str
    text: str
    locations: Mapping[DocumentPath, Location] = field(default_factory=dict)
    key_locations: Mapping[DocumentPath, Location] = field(default_factory=dict)
    boolean_words: Mapping[DocumentPath, str] = field(default_factory=dict)
    """Document paths whose plain scalar YAML read as a boolean, with the word as written."""
    diagnostics: tuple[Diagnostic, ...] = ()

    def location(self, path: DocumentPath, *, key: bool = False) -> Location:
        """The location of the node at `path` (its key with `key=True`), else the nearest parent."""
        table = self.key_locations if key else self.locations
        probe = path
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.locations:
                return self.locations[probe]
            probe = probe[:-1]
        return self.locations.get((), Location(self.file, 1, 1))


def file_too_large(file: str, size: str, limit: int) -> Diagnostic:
    return Diagnostic(
        "too-large",
        "error",
        f"the file holds {size} bytes; at most {limit:,} are read",
        Location(file, 1, 1),
        help="a policy is a few kilobytes; check that this is the right file",
    )
