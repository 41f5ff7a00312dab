"""A YAML loader that keeps `line:col` for every node and refuses the format's traps.

PyYAML silently keeps the last of two duplicate keys and reads `yes`/`no`/`on`/`off` as
booleans (YAML 1.1). Policy files are edited by hand, so both are reported instead: a
duplicate key is an error naming both places, and every plain scalar that resolved to a
boolean is remembered so the schema stage can say "quote it" where a string was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._diagnostics import Diagnostic, Location, PolicyError

DocumentPath = tuple[str | int, ...]

# The scalars YAML 1.1 turns into booleans; only these are traps (`true`/`false` are meant).
IMPLICIT_BOOLEAN_WORDS = frozenset(
    {
        "y",
        "yes",
        "n",
        "no",
        "on",
        "off",
        "Y",
        "Yes",
        "YES",
        "N",
        "No",
        "NO",
        "On",
        "ON",
        "Off",
        "OFF",
    }
)


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


class _Builder:
    """Turns a composed node tree into plain data, recording marks and traps."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.constructor = yaml.SafeLoader("")
        self.locations: dict[DocumentPath, Location] = {}
        self.key_locations: dict[DocumentPath, Location] = {}
        self.boolean_words: dict[DocumentPath, str] = {}
        self.diagnostics: list[Diagnostic] = []

    def mark(self, node: yaml.Node) -> Location:
        return Location(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node: yaml.Node, path: DocumentPath) -> Any:
        self.locations[path] = self.mark(node)
        if isinstance(node, yaml.MappingNode):
            return self.build_mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        return self.build_scalar(node, path)

    def build_scalar(self, node: yaml.Node, path: DocumentPath) -> Any:
        value = self.constructor.construct_object(node, deep=True)
        plain = isinstance(node, yaml.ScalarNode) and node.style is None
        if isinstance(value, bool) and plain and node.value in IMPLICIT_BOOLEAN_WORDS:
            self.boolean_words[path] = node.value
        return value

    def build_mapping(self, node: yaml.MappingNode, path: DocumentPath) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        first_seen: dict[Any, Location] = {}
        for key_node, value_node in node.value:
            key = self.constructor.construct_object(key_node, deep=True)
            key_location = self.mark(key_node)
            if not isinstance(key, str | int | bool | float) or key is None:
                self.diagnostics.append(
                    Diagnostic(
                        "yaml-bad-key",
                        "error",
                        "mapping keys must be plain words",
                        key_location,
                        path,
                        help="write the key as a plain string",
                    )
                )
                continue
            if key in first_seen:
                self.diagnostics.append(_duplicate_key(key, key_location, first_seen[key], path))
                continue
            first_seen[key] = key_location
            part = key if isinstance(key, str | int) else str(key)
            self.key_locations[(*path, part)] = key_location
            result[key] = self.build(value_node, (*path, part))
        return result


def _duplicate_key(key: Any, here: Location, first: Location, path: DocumentPath) -> Diagnostic:
    return Diagnostic(
        "duplicate-key",
        "error",
        f"duplicate key `{key}` (first defined at line {first.line}, column {first.column})",
        here,
        (*path, key),
        help="YAML tools keep only one of the two values silently; remove or rename one of them",
    )


def read_source_file(path: str | Path, kind: str = "file") -> str:
    """The text of a policy, registry, catalog or config file (`kind` names which, e.g.
    `agent config`); `PolicyError` at the file's own location if unreadable."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        raise PolicyError(
            [
                Diagnostic(
                    "unreadable-file",
                    "error",
                    f"cannot read the {kind} `{path}`: {reason[:1].lower()}{reason[1:]}",
                    Location(str(path)),
                    help="check the path, and that the file is readable UTF-8 text",
                )
            ]
        ) from error


def load_yaml(text: str, file: str = "<policy>") -> LoadedYaml:
    """Parse one YAML document. Never raises for bad input: problems become diagnostics."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        return LoadedYaml(None, file, text, diagnostics=(_syntax_error(error, file),))
    except yaml.YAMLError as error:
        message = str(error).splitlines()[0] if str(error) else "the file is not valid YAML"
        diagnostic = Diagnostic("yaml-syntax", "error", message, Location(file, 1, 1))
        return LoadedYaml(None, file, text, diagnostics=(diagnostic,))
    if node is None:
        empty = Diagnostic(
            "empty-document",
            "error",
            "the file is empty",
            Location(file, 1, 1),
            help="start from `policies/default.yaml`",
        )
        return LoadedYaml(None, file, text, diagnostics=(empty,))
    builder = _Builder(file)
    try:
        data = builder.build(node, ())
    except yaml.MarkedYAMLError as error:
        return LoadedYaml(None, file, text, diagnostics=(_syntax_error(error, file),))
    return LoadedYaml(
        data,
        file,
        text,
        builder.locations,
        builder.key_locations,
        builder.boolean_words,
        tuple(builder.diagnostics),
    )


def _syntax_error(error: yaml.MarkedYAMLError, file: str) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    location = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file, 1, 1)
    problem = error.problem or error.context or "the file is not valid YAML"
    context = f" ({error.context})" if error.context and error.problem else ""
    return Diagnostic(
        "yaml-syntax",
        "error",
        f"{problem}{context}",
        location,
        help="check indentation and quoting near this position",
    )
