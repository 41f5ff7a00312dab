"""Plain data from libyaml's event stream, built with an explicit stack under hard bounds.

Every bound is checked when the event that would exceed it arrives, so nothing is walked
recursively and no alias is expanded before its cost is known: the depth of a node, the
length of a string, the items of one list or mapping, and the values of the whole document
with aliases counted as expanded (a "billion laughs" file is a few kilobytes of text that
expands to 10^9 values).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import yaml

from .._diagnostics import Diagnostic, Location
from ._reader import ScalarReader
from ._scalars import (
    DEFAULT_LIMITS,
    MAP,
    SEQ,
    DocumentPath,
    LoadAbort,
    YamlLimits,
    bad_tag,
    problem,
    shown,
    too_deep,
    too_large,
)

# Paths under this prefix belong to values that are read but not kept (a duplicate key's
# value, a bad key): their locations must not overwrite those of the kept value.
_DROPPED: Final[DocumentPath] = (-1,)
_LOCATION, _KEY_LOCATION, _BOOLEAN = 0, 1, 2


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
        self.scalars = ScalarReader(limits)
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
                self.located(
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
            raise LoadAbort(too_large(f"the document holds more than {limit:,} values", location))
        if len(self.stack) + depth > self.limits.max_depth:
            raise LoadAbort(too_deep(self.limits.max_depth, location))
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
        scalar = self.scalars.read(event, location)
        if scalar.problem is not None:
            self.diagnostics.append(scalar.problem)
        if scalar.boolean_word is not None:
            self.log.append((_BOOLEAN, start.path, scalar.boolean_word))
        self.merge_key, value = scalar.merge, scalar.value
        if start.anchor is not None:
            self.remember(start, value, 0)
        self.deliver(value, location)

    def open(self, event: yaml.CollectionStartEvent) -> None:
        location = self.mark(event)
        is_sequence = isinstance(event, yaml.SequenceStartEvent)
        if event.tag not in (None, "!", SEQ if is_sequence else MAP):
            raise LoadAbort(bad_tag(event.tag, location))
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

    def alias(self, event: yaml.AliasEvent) -> Any:
        location = self.mark(event)
        serial = self.latest_anchor.get(event.anchor or "")
        if serial is None:
            raise LoadAbort(
                self.located(
                    "yaml-syntax",
                    f"found undefined alias `{shown(event.anchor)}`",
                    location,
                    "define the anchor (`&name`) before the alias (`*name`) that uses it",
                )
            )
        if serial in self.open_anchors:
            raise LoadAbort(
                self.located(
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
                self.located(
                    "alias-expansion",
                    f"aliases expand to more than {self.limits.max_alias_values:,} values "
                    f"(`*{shown(event.anchor)}` alone adds {anchor.values:,})",
                    location,
                    "aliases that nest aliases grow exponentially; write the values out",
                )
            )
        if len(self.stack) + anchor.depth > self.limits.max_depth:
            raise LoadAbort(too_deep(self.limits.max_depth, location))
        self.values += anchor.values
        if self.stack:
            top = self.stack[-1]
            top.deepest = max(top.deepest, len(self.stack) - 1 + anchor.depth)
        path = self.child_path()
        self.log.append((_LOCATION, path, location))
        for kind, relative, payload in anchor.log:
            if relative or kind == _BOOLEAN:
                self.log.append((kind, (*path, *relative), payload))
        return _copied(anchor.value)

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
                too_large(f"a {what} of more than {self.limits.max_items:,} items", location)
            )

    def accept_key(self, frame: _Frame, key: Any, location: Location) -> bool:
        if self.merge_key:
            self.diagnostics.append(
                self.located(
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
                self.located(
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
                self.located(
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

    def located(
        self, code: str, message: str, location: Location, help_text: str, path: DocumentPath = ()
    ) -> Diagnostic:
        return problem(code, message, location, help_text, () if path[:1] == _DROPPED else path)

    def tables(
        self,
    ) -> tuple[dict[DocumentPath, Location], dict[DocumentPath, Location], dict[DocumentPath, str]]:
        tables: tuple[dict[DocumentPath, Any], ...] = ({}, {}, {})
        for kind, path, payload in self.log:
            if path[:1] != _DROPPED:
                tables[kind][path] = payload
        return tables[0], tables[1], tables[2]


def _path_part(key: Any) -> str | int:
    return key if isinstance(key, str | int) else str(key)


def _copied(value: Any) -> Any:
    """A copy of built data for one alias: its own lists and mappings, the same scalars.

    The builder makes only lists, dicts and immutable scalars (text, numbers, booleans,
    `None`), so this is `copy.deepcopy` without its memo and dispatch (a quarter of the time of
    loading an alias-heavy file), walked with an explicit stack like everything here."""
    kind = type(value)
    if kind is not list and kind is not dict:
        return value
    root: Any = [] if kind is list else {}
    pending: list[tuple[Any, Any]] = [(value, root)]
    while pending:
        source, target = pending.pop()
        items = enumerate(source) if type(source) is list else source.items()
        for key, item in items:
            kind = type(item)
            if kind is list or kind is dict:
                child: Any = [] if kind is list else {}
                pending.append((item, child))
                item = child
            if type(target) is list:
                target.append(item)
            else:
                target[key] = item
    return root
