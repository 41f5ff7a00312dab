"""Plain data from libyaml's event stream, built with an explicit stack under hard bounds.

Every bound is checked when the event that would exceed it arrives, so nothing is walked
recursively and no alias is expanded before its cost is known: the depth of a node, the
length of a string, the items of one list or mapping, and the values of the whole document
with aliases counted as expanded (a "billion laughs" file is a few kilobytes of text that
expands to 10^9 values).
"""

from __future__ import annotations

import copy
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from ._diagnostics import Diagnostic, Location

DocumentPath = tuple[str | int, ...]

_TAG: Final = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (f"{_TAG}{name}" for name in ("str", "int", "float", "bool", "null"))
TIMESTAMP, MERGE, VALUE = (f"{_TAG}{name}" for name in ("timestamp", "merge", "value"))
SEQ, MAP = f"{_TAG}seq", f"{_TAG}map"
_SCALAR_TAGS: Final = frozenset({STR, INT, FLOAT, BOOL, NULL})
_NUMBER_TAGS: Final = frozenset({INT, FLOAT})

# Paths under this prefix belong to values that are read but not kept (a duplicate key's
# value, a bad key): their locations must not overwrite those of the kept value.
_DROPPED: Final[DocumentPath] = (-1,)
_LOCATION, _KEY_LOCATION, _BOOLEAN = 0, 1, 2


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


class LoadAbort(Exception):
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
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in value[: limit * 2])
    elif value is None:
        text = "null"
    else:
        # reprlib stops at a few levels and items: a huge nested value is never rendered whole.
        bounded = reprlib.Repr()
        bounded.maxlevel, bounded.maxlist, bounded.maxdict = 3, 6, 4
        bounded.maxstring = bounded.maxother = limit
        text = bounded.repr(value)
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class _Anchor:
    value: Any
    log: tuple[tuple[int, DocumentPath, Any], ...]
    """What the anchored node recorded, with paths relative to it."""
    values: int
    depth: int


class _Start(NamedTuple):
    path: DocumentPath
    log_start: int
    values: int
    """Values counted before this node."""
    anchor: int | None
    """The serial number of the node's anchor, if it has one."""


@dataclass
class _Frame:
    start: _Start
    value: list[Any] | dict[Any, Any]
    location: Location
    base: int
    """How many collections enclose this one."""
    deepest: int
    """The deepest nesting reached inside, as a count of enclosing collections."""
    pending_key: tuple[Any, bool] | None = None
    """In a mapping: the key read and whether its value is kept."""
    first_seen: dict[Any, Location] = field(default_factory=dict)

    @property
    def path(self) -> DocumentPath:
        return self.start.path


class Builder:
    """Consumes events into data, locations, boolean words and non-fatal diagnostics."""

    def __init__(self, file: str, limits: YamlLimits = DEFAULT_LIMITS) -> None:
        self.file = file
        self.limits = limits
        self.resolver = Resolver()
        self.constructor = SafeConstructor()
        self.diagnostics: list[Diagnostic] = []
        self.log: list[tuple[int, DocumentPath, Any]] = []
        self.stack: list[_Frame] = []
        self.anchors: dict[int, _Anchor] = {}
        self.anchor_count = 0
        self.latest_anchor: dict[str, int] = {}
        self.open_anchors: set[int] = set()
        self.values = 0
        self.alias_values = 0
        self.root: Any = None
        self.merge_key = False

    # -- driving ---------------------------------------------------------------------------

    def run(self, events: Iterator[yaml.Event]) -> bool:
        """Build the single document; False when the stream holds no document at all."""
        next(events)  # StreamStartEvent
        first = next(events)
        if isinstance(first, yaml.StreamEndEvent):
            return False
        for event in events:
            if isinstance(event, yaml.DocumentEndEvent):
                break
            self.event(event)
        following = next(events)
        if isinstance(following, yaml.DocumentStartEvent):
            raise LoadAbort(
                self.problem(
                    "yaml-syntax",
                    "expected a single document in the stream, but found another document",
                    self.mark(following),
                    "a policy file holds one YAML document; remove the `---` line",
                )
            )
        return True

    def event(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.ScalarEvent):
            self.on_scalar(event)
        elif isinstance(event, yaml.AliasEvent):
            self.deliver(self.alias(event), self.mark(event))
        elif isinstance(event, yaml.CollectionStartEvent):
            self.open(event)
        elif isinstance(event, yaml.CollectionEndEvent):
            self.close()

    # -- nodes -----------------------------------------------------------------------------

    def mark(self, event: yaml.Event) -> Location:
        mark = event.start_mark
        return Location(self.file, mark.line + 1, mark.column + 1) if mark else Location(self.file)

    def child_path(self) -> DocumentPath:
        if not self.stack:
            return ()
        top = self.stack[-1]
        if isinstance(top.value, list):
            return (*top.path, len(top.value))
        if top.pending_key is None:
            return _DROPPED  # a key node: its own content is never looked up by path
        key, kept = top.pending_key
        return (*top.path, _path_part(key)) if kept else (*_DROPPED, *top.path)

    def begin(self, event: yaml.NodeEvent, location: Location, depth: int) -> _Start:
        """Count the node, check the bounds that apply before it is read, log its location."""
        path = self.child_path()
        self.values += 1
        if self.values > self.limits.max_values:
            limit = self.limits.max_values
            raise LoadAbort(
                self.too_large(f"the document holds more than {limit:,} values", location)
            )
        if len(self.stack) + depth > self.limits.max_depth:
            raise LoadAbort(self.too_deep(location))
        start = _Start(path, len(self.log), self.values - 1, None)
        self.log.append((_LOCATION, path, location))
        if event.anchor is not None:
            self.anchor_count += 1
            self.latest_anchor[event.anchor] = self.anchor_count
            self.open_anchors.add(self.anchor_count)
            start = start._replace(anchor=self.anchor_count)
        return start

    def on_scalar(self, event: yaml.ScalarEvent) -> None:
        location = self.mark(event)
        start = self.begin(event, location, 0)
        value = self.scalar(event, start.path, location)
        if start.anchor is not None:
            self.remember(start, value, 0)
        self.deliver(value, location)

    def open(self, event: yaml.CollectionStartEvent) -> None:
        location = self.mark(event)
        is_sequence = isinstance(event, yaml.SequenceStartEvent)
        if event.tag not in (None, "!", SEQ if is_sequence else MAP):
            raise LoadAbort(self.bad_tag(event.tag, location))
        start = self.begin(event, location, 1)
        value: list[Any] | dict[Any, Any] = [] if is_sequence else {}
        base = len(self.stack)
        self.stack.append(_Frame(start, value, location, base, base))

    def close(self) -> None:
        frame = self.stack.pop()
        if self.stack:
            self.stack[-1].deepest = max(self.stack[-1].deepest, frame.deepest)
        if frame.start.anchor is not None:
            self.remember(frame.start, frame.value, frame.deepest + 1 - frame.base)
        self.deliver(frame.value, frame.location)

    def remember(self, start: _Start, value: Any, depth: int) -> None:
        """Keep an anchored node, with what it logged relative to itself, for its aliases."""
        assert start.anchor is not None
        self.open_anchors.discard(start.anchor)
        cut = len(start.path)
        relative = tuple(
            (kind, path[cut:], item) for kind, path, item in self.log[start.log_start :]
        )
        self.anchors[start.anchor] = _Anchor(value, relative, self.values - start.values, depth)

    def scalar(self, event: yaml.ScalarEvent, path: DocumentPath, location: Location) -> Any:
        text: str = event.value
        self.merge_key = False
        if len(text) > self.limits.max_string:
            raise LoadAbort(
                self.too_large(
                    f"a string of {len(text):,} characters; at most "
                    f"{self.limits.max_string:,} are read",
                    location,
                )
            )
        explicit = event.tag not in (None, "!")
        tag = event.tag if explicit else self.resolve(text, event.implicit)
        if explicit and tag not in _SCALAR_TAGS:
            self.diagnostics.append(self.bad_tag(tag, location))
            return None
        if tag == MERGE:
            self.merge_key = True
        if tag not in _SCALAR_TAGS or tag == STR:
            return text  # timestamps, `=` and `<<` stay the text as written
        return self.typed(text, tag, explicit, location, path)

    def resolve(self, text: str, implicit: tuple[bool, bool]) -> str:
        """The tag YAML 1.1 gives a plain (or quoted) scalar: PyYAML's own resolver."""
        tag: str = self.resolver.resolve(  # type: ignore[no-untyped-call]  # PyYAML is untyped here
            yaml.ScalarNode, text, implicit
        )
        return tag

    def typed(
        self, text: str, tag: str, explicit: bool, location: Location, path: DocumentPath
    ) -> Any:
        implied = self.resolve(text, (True, False))
        if implied != tag and not (tag == FLOAT and implied == INT):
            self.diagnostics.append(self.bad_value(text, tag, location))
            return None
        if tag in _NUMBER_TAGS and len(text) > self.limits.max_number_chars:
            limit = self.limits.max_number_chars
            self.diagnostics.append(
                self.too_large(
                    f"a number of {len(text):,} characters; at most {limit} are read", location
                )
            )
            return None
        node = yaml.ScalarNode(tag, text)
        if tag == BOOL:
            value = self.constructor.construct_yaml_bool(node)
            if not explicit and text in _BOOLEAN_TRAPS:
                self.log.append((_BOOLEAN, path, text))
            return value
        if tag == NULL:
            return None
        try:
            return (
                self.constructor.construct_yaml_int(node)
                if tag == INT
                else self.constructor.construct_yaml_float(node)
            )
        except (ValueError, IndexError):
            # The resolver's patterns admit a few spellings with no digits (`0b_`, `._`).
            if explicit:
                self.diagnostics.append(self.bad_value(text, tag, location))
                return None
            return text

    def alias(self, event: yaml.AliasEvent) -> Any:
        location = self.mark(event)
        serial = self.latest_anchor.get(event.anchor or "")
        if serial is None:
            raise LoadAbort(
                self.problem(
                    "yaml-syntax",
                    f"found undefined alias `{shown(event.anchor)}`",
                    location,
                    "define the anchor (`&name`) before the alias (`*name`) that uses it",
                )
            )
        if serial in self.open_anchors:
            raise LoadAbort(
                self.problem(
                    "recursive-alias",
                    f"alias `*{shown(event.anchor)}` refers to a node that contains it",
                    location,
                    "a value cannot contain itself; write the nested value out",
                )
            )
        anchor = self.anchors[serial]
        self.alias_values += anchor.values
        if (
            self.alias_values > self.limits.max_alias_values
            or self.values + anchor.values > self.limits.max_values
        ):
            raise LoadAbort(
                self.problem(
                    "alias-expansion",
                    f"aliases expand to more than {self.limits.max_alias_values:,} values "
                    f"(`*{shown(event.anchor)}` alone adds {anchor.values:,})",
                    location,
                    "aliases that nest aliases grow exponentially; write the values out",
                )
            )
        if len(self.stack) + anchor.depth > self.limits.max_depth:
            raise LoadAbort(self.too_deep(location))
        self.values += anchor.values
        if self.stack:
            top = self.stack[-1]
            top.deepest = max(top.deepest, len(self.stack) - 1 + anchor.depth)
        path = self.child_path()
        self.log.append((_LOCATION, path, location))
        for kind, relative, payload in anchor.log:
            if relative or kind == _BOOLEAN:
                self.log.append((kind, (*path, *relative), payload))
        return copy.deepcopy(anchor.value)

    # -- assembling --------------------------------------------------------------------------

    def deliver(self, value: Any, location: Location) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.value, list):
            self.check_items(top, location)
            top.value.append(value)
        elif top.pending_key is None:
            self.check_items(top, location)
            top.pending_key = (value, self.accept_key(top, value, location))
        else:
            key, kept = top.pending_key
            top.pending_key = None
            if kept:
                top.value[key] = value
        self.merge_key = False

    def check_items(self, frame: _Frame, location: Location) -> None:
        if len(frame.value) >= self.limits.max_items:
            what = "list" if isinstance(frame.value, list) else "mapping"
            raise LoadAbort(
                self.too_large(f"a {what} of more than {self.limits.max_items:,} items", location)
            )

    def accept_key(self, frame: _Frame, key: Any, location: Location) -> bool:
        if self.merge_key:
            self.diagnostics.append(
                self.problem(
                    "yaml-bad-key",
                    "merge keys (`<<`) are not supported",
                    location,
                    "write the merged keys out in this mapping",
                    (*frame.path, "<<"),
                )
            )
            return False
        if key is None or not isinstance(key, str | int | float):
            self.diagnostics.append(
                self.problem(
                    "yaml-bad-key",
                    "mapping keys must be plain words",
                    location,
                    "write the key as a plain string",
                    frame.path,
                )
            )
            return False
        if key in frame.first_seen:
            first = frame.first_seen[key]
            self.diagnostics.append(
                self.problem(
                    "duplicate-key",
                    f"duplicate key `{shown(key)}` (first defined at line {first.line}, "
                    f"column {first.column})",
                    location,
                    "YAML tools keep only one of the two values silently; "
                    "remove or rename one of them",
                    (*frame.path, _path_part(key)),
                )
            )
            return False
        frame.first_seen[key] = location
        self.log.append((_KEY_LOCATION, (*frame.path, _path_part(key)), location))
        return True

    def tables(
        self,
    ) -> tuple[dict[DocumentPath, Location], dict[DocumentPath, Location], dict[DocumentPath, str]]:
        tables: tuple[dict[DocumentPath, Any], ...] = ({}, {}, {})
        for kind, path, payload in self.log:
            if path[:1] != _DROPPED:
                tables[kind][path] = payload
        return tables[0], tables[1], tables[2]

    # -- diagnostics -------------------------------------------------------------------------

    def problem(
        self,
        code: str,
        message: str,
        location: Location,
        help_text: str = "",
        path: DocumentPath = (),
    ) -> Diagnostic:
        shown_path = () if path[:1] == _DROPPED else path
        return Diagnostic(code, "error", message, location, shown_path, help=help_text)

    def too_large(self, what: str, location: Location) -> Diagnostic:
        return self.problem(
            "too-large",
            what,
            location,
            "split the value or shorten it; these bounds keep loading fast and safe",
        )

    def too_deep(self, location: Location) -> Diagnostic:
        return self.problem(
            "too-deep",
            f"values nested more than {self.limits.max_depth} levels deep",
            location,
            "a policy needs a few levels; flatten this value",
        )

    def bad_tag(self, tag: str | None, location: Location) -> Diagnostic:
        name = shown(tag).replace(_TAG, "!!")
        return self.problem(
            "yaml-tag",
            f"the tag `{name}` is not supported",
            location,
            "remove the tag: only strings, numbers, booleans, lists and mappings are read",
        )

    def bad_value(self, text: str, tag: str, location: Location) -> Diagnostic:
        return self.problem(
            "yaml-tag",
            f"`{shown(text)}` is not a valid `{tag.replace(_TAG, '!!')}`",
            location,
            "remove the tag, or write a value of that type",
        )


# The plain scalars YAML 1.1 reads as booleans although a word was likely meant.
_BOOLEAN_TRAPS: Final = frozenset(
    {"y", "yes", "n", "no", "on", "off"}
    | {"Y", "Yes", "YES", "N", "No", "NO", "On", "ON", "Off", "OFF"}
)


def _path_part(key: Any) -> str | int:
    return key if isinstance(key, str | int) else str(key)
