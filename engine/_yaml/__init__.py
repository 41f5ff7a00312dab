"""A YAML loader that keeps `line:col` for every node and refuses the format's traps.

PyYAML silently keeps the last of two duplicate keys and reads `yes`/`no`/`on`/`off` as
booleans (YAML 1.1). Policy files are edited by hand, so both are reported instead: a
duplicate key is an error naming both places, and every plain scalar that resolved to a
boolean is remembered so the schema stage can say "quote it" where a string was expected.

Policy files also arrive in pull requests, so the loader must hold against hostile input.
It reads libyaml's event stream (C, linear in the file size, never recursive) and builds the
data itself with an explicit stack under hard bounds (`YamlLimits`): a recursive alias, a
file nested thousands deep or a "billion laughs" is refused with a located diagnostic before
any recursive walk or alias expansion happens. Only the YAML core types are read: explicit
tags other than `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!seq` and `!!map` are
refused, and timestamps stay the text as written.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from visiongate.kernel._files import read_regular_file

from .._diagnostics import Diagnostic, Location, PolicyError
from ._build import Builder
from ._scalars import DEFAULT_LIMITS, DocumentPath, LoadAbort, YamlLimits, shown

__all__ = [
    "DEFAULT_LIMITS",
    "DocumentPath",
    "LoadedYaml",
    "YamlLimits",
    "load_yaml",
    "read_source_file",
    "shown",
]

# libyaml keeps marks and runs in C; the pure-Python parser (the same state machine, about
# 30 times slower) is the fallback where PyYAML was built without it.
_LOADER: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


_UNCAPPED: Final = 1 << 40
"""The cap of a caller that asked for none: still a regular file only."""
NOT_UTF8: Final = "not UTF-8 text"
"""How an unreadable file's diagnostic ends when the file is there but is not text: a file
that fails to load (exit 3), where a missing one is a usage error (exit 2)."""


def read_source_file(
    path: str | Path, max_bytes: int | None = DEFAULT_LIMITS.max_bytes, *, kind: str = "file"
) -> str:
    """The text of a policy, registry, catalog or config file (`kind` names which, e.g.
    `agent config`); `PolicyError` at the file's own location if unreadable.

    At most `max_bytes` are read: a larger file is refused without reading it whole; a FIFO or
    a device at the path is refused unread (`kernel._files`)."""
    try:
        cap = _UNCAPPED if max_bytes is None else max_bytes + 1
        data = read_regular_file(path, cap, whole=False)
        if max_bytes is not None and len(data) > max_bytes:
            raise PolicyError([_file_too_large(str(path), f"more than {max_bytes:,}", max_bytes)])
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or NOT_UTF8
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


def load_yaml(text: str, file: str = "<policy>", limits: YamlLimits = DEFAULT_LIMITS) -> LoadedYaml:
    """Parse one YAML document. Never raises for bad input: problems become diagnostics."""
    size = _size_in_bytes(text, limits.max_bytes)
    if size > limits.max_bytes:
        too_large = _file_too_large(file, f"{size:,}", limits.max_bytes)
        return LoadedYaml(None, file, text, diagnostics=(too_large,))
    builder = Builder(file, limits)
    events = _events(text)
    try:
        found = builder.run(events)
    except LoadAbort as abort:
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, abort.diagnostic))
    except yaml.MarkedYAMLError as error:
        diagnostic = _syntax_error(error, file)
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    except yaml.YAMLError as error:
        reason = getattr(error, "reason", None) or "the file is not valid YAML"
        diagnostic = _character_error(reason, getattr(error, "position", None), text, file)
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    except UnicodeEncodeError as error:
        # Only text given directly can hold a lone surrogate: files are decoded as UTF-8.
        diagnostic = _character_error(
            "a lone surrogate is not a character", error.start, text, file
        )
        return LoadedYaml(None, file, text, diagnostics=(*builder.diagnostics, diagnostic))
    finally:
        events.close()
    if not found:
        empty = Diagnostic(
            "empty-document",
            "error",
            "the file is empty",
            Location(file, 1, 1),
            help="start from `policies/default.yaml`",
        )
        return LoadedYaml(None, file, text, diagnostics=(empty,))
    locations, key_locations, boolean_words = builder.tables()
    return LoadedYaml(
        builder.root,
        file,
        text,
        locations,
        key_locations,
        boolean_words,
        tuple(builder.diagnostics),
    )


def _events(text: str) -> Generator[yaml.Event, None, None]:
    parser = _LOADER(text)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        parser.dispose()


def _size_in_bytes(text: str, limit: int) -> int:
    # A UTF-8 character takes at most 4 bytes: encode only when the answer is in doubt.
    return len(text) if len(text) * 4 <= limit else len(text.encode("utf-8", "surrogatepass"))


def _file_too_large(file: str, size: str, limit: int) -> Diagnostic:
    return Diagnostic(
        "too-large",
        "error",
        f"the file holds {size} bytes; at most {limit:,} are read",
        Location(file, 1, 1),
        help="a policy is a few kilobytes; check that this is the right file",
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


def _character_error(reason: str, position: object, text: str, file: str) -> Diagnostic:
    """A character libyaml refuses (a control character), located from its position."""
    location = Location(file, 1, 1)
    if isinstance(position, int) and 0 <= position <= len(text):
        line_start = text.rfind("\n", 0, position) + 1
        location = Location(file, text.count("\n", 0, position) + 1, position - line_start + 1)
    return Diagnostic(
        "yaml-syntax",
        "error",
        shown(reason, 120),
        location,
        help="remove control characters; write them as escapes in a double-quoted string",
    )
