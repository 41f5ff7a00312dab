"""A persistent cache of what a policy compiles to, for command lines that start cold.

A CLI call (a pre-commit hook, a CI step) loads a policy once and exits, so the in-process
caches never help it; validating with cerberus and compiling with durable-rules are most of
its time. An entry keeps, for one policy content, what those stages produced: the validated
document, the match sets (for every cell, the rules whose `when` matches it) and the
non-error diagnostics, and the parsed YAML with the location of every node. Loading then
rebuilds the policy from the document without parsing the YAML (nor importing PyYAML).

- Keyed by the sha256 of the policy text and a fingerprint of the engine (the package
  version and the source of `visiongate.engine`'s own modules), so an edited policy or an
  upgraded (or, in a checkout, edited) engine never meets a stale entry.
- In `$XDG_CACHE_HOME/visiongate/policies` (default `~/.cache/...`), or
  `$VISIONGATE_POLICY_CACHE`; `VISIONGATE_POLICY_CACHE=off` turns it off.
- Safe under concurrent writers: an entry is written to a temporary file in the same folder
  and renamed into place, so a reader sees a whole entry or none; writers of one key write
  the same bytes.
- Trusted for nothing: an entry that cannot be read or parsed, or whose match sets disagree
  with the rules' own conditions (checked in Python over every cell), is ignored and the
  policy is compiled as if there were none. Failures to write are logged, never raised.
- Bounded: beyond `MAX_ENTRIES` files the oldest are removed.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from visiongate.kernel._digest import blake2b, sha256
from visiongate.kernel._lazy import lazy_logger

from ._diagnostics import Diagnostic, Location
from ._files import keep_newest, module_sources, replace_file
from ._policy import Policy, condition_matches
from ._vocabulary import CELL_COUNT, Cell, all_cells
from ._yaml import DocumentPath, LoadedYaml

logger = lazy_logger("visiongate")  # `logging` only if something goes wrong (issue 37)

FORMAT: Final = 2
MAX_ENTRIES: Final = 256
ENVIRONMENT: Final = "VISIONGATE_POLICY_CACHE"


def cache_directory() -> Path | None:
    """Where entries live; None when the cache is turned off."""
    chosen = os.environ.get(ENVIRONMENT)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "0", "off", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "visiongate" / "policies"


@functools.lru_cache(maxsize=1)  # one engine per process
def engine_fingerprint() -> str:
    """The package version and the source of the engine's modules, hashed (BLAKE2b, `_digest`)."""
    from visiongate import __version__

    digest = blake2b(f"{FORMAT}\0{__version__}".encode())
    # The engine's own modules and private packages (`_yaml/`); not `facts/` or `tooling/`,
    # which a compiled policy does not depend on.
    for name, source in module_sources(Path(__file__).parent, _private_package):
        digest.update(name.encode() + b"\0" + source)
    return digest.hexdigest()[:24]


def _private_package(name: str) -> bool:
    return name.startswith("_") and "/" not in name


class CacheEntry:
    """What the validate and compile stages produced for one policy content.

    A plain class, not a frozen dataclass: an entry is read back and used once, never compared
    or shown, and making a dataclass costs every start-up about 0.5 ms (issue 37)."""

    __slots__ = ("diagnostics", "document", "matches", "source")

    def __init__(
        self,
        document: dict[str, Any],
        matches: tuple[tuple[int, ...], ...],
        diagnostics: tuple[Diagnostic, ...],
        source: dict[str, Any],
    ) -> None:
        self.document = document
        self.matches = matches  # per cell, in `all_cells()` order, the matching rules' indexes
        self.diagnostics = diagnostics
        self.source = source  # the parsed YAML (`_source_dict`): data, locations, diagnostics

    def loaded(self, text: str, file: str) -> LoadedYaml:
        """The parsed YAML of `text`, as `load_yaml` made it when the entry was written."""
        source = self.source
        return LoadedYaml(
            source["data"],
            file,
            text,
            _locations(source["locations"], file),
            _locations(source["keys"], file),
            {_path(path): str(word) for path, word in source["booleans"]},
            tuple(_located(_diagnostic(item), file) for item in source["diagnostics"]),
        )

    def checked_matches(self, policy: Policy) -> Mapping[Cell, tuple[int, ...]] | None:
        """The match sets, if they agree with every rule's `when` on every cell; else None."""
        cells = list(all_cells())
        for cell, indexes in zip(cells, self.matches, strict=True):
            expected = tuple(r.index for r in policy.rules if condition_matches(r.when, cell))
            if indexes != expected:
                logger.debug("visiongate: compile cache entry disagrees with the policy; ignored")
                return None
        return MappingProxyType(dict(zip(cells, self.matches, strict=True)))


def _entry_path(text: str) -> Path | None:
    directory = cache_directory()
    if directory is None:
        return None
    # `surrogatepass`: a text with a lone surrogate (which the loader then refuses) must not
    # make the cache raise; it is keyed like any other.
    sha = sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        engine = engine_fingerprint()
    except OSError as error:  # an installation whose modules cannot be read back
        logger.debug("visiongate: compile cache off, no engine fingerprint: %s", error)
        return None
    return directory / f"{sha}-{engine}.json"


def recall(text: str) -> CacheEntry | None:
    """The entry for this policy text, or None (missing, unreadable or malformed)."""
    path = _entry_path(text)
    if path is None or not path.is_file():
        return None
    try:
        return _parse(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        logger.debug("visiongate: compile cache entry %s ignored: %s", path, error)
        return None


def _parse(raw: Any) -> CacheEntry:
    if raw.get("format") != FORMAT or not isinstance(raw.get("document"), dict):
        raise ValueError("not an entry of this format")
    matches = tuple(tuple(int(i) for i in indexes) for indexes in raw["matches"])
    if len(matches) != CELL_COUNT:
        raise ValueError(f"{len(matches)} cells, not {CELL_COUNT}")
    diagnostics = tuple(_diagnostic(item) for item in raw["diagnostics"])
    if not isinstance(raw.get("source"), dict):
        raise ValueError("an entry without its parsed YAML")
    _check_source(raw["source"])  # its parsed YAML is of the right shape, or it is refused
    return CacheEntry(raw["document"], matches, diagnostics, raw["source"])


def _check_source(source: dict[str, Any]) -> None:
    """Raise as `CacheEntry.loaded` would on a damaged parsed YAML, without making its
    hundreds of locations: a recalled policy makes them once, when it is rebuilt (issue 37)."""
    if "data" not in source:
        raise KeyError("data")
    for rows in (source["locations"], source["keys"]):
        for path, line, column in rows:
            _path(path)
            int(line)
            int(column)
    for path, _word in source["booleans"]:
        _path(path)
    for item in source["diagnostics"]:
        _diagnostic(item)


def _path(raw: Any) -> DocumentPath:
    if not isinstance(raw, list) or not all(type(part) in (str, int) for part in raw):
        raise ValueError("a document path is a list of keys and indexes")
    return tuple(raw)


def _locations(rows: Any, file: str) -> dict[DocumentPath, Location]:
    return {_path(path): Location(file, int(line), int(column)) for path, line, column in rows}


def _located(diagnostic: Diagnostic, file: str) -> Diagnostic:
    return replace(diagnostic, location=replace(diagnostic.location, file=file))


def _diagnostic(item: Mapping[str, Any]) -> Diagnostic:
    severity = item["severity"]
    if severity not in ("warning", "info"):
        raise ValueError("an entry holds only non-error diagnostics")
    return Diagnostic(
        str(item["code"]),
        severity,
        str(item["message"]),
        Location("<policy>", int(item["line"]), int(item["column"])),
        tuple(item["path"]),
        str(item["help"]),
        tuple(str(cell) for cell in item["cells"]),
        str(item["rule"]),
    )


def remember(
    text: str,
    loaded: LoadedYaml | None,
    document: Mapping[str, Any] | None,
    matches: Mapping[Cell, tuple[int, ...]],
    diagnostics: Sequence[Diagnostic],
) -> None:
    """Store an entry for a policy that loaded without errors; never raises."""
    path = _entry_path(text)
    if path is None or document is None or loaded is None:
        return
    entry = {
        "format": FORMAT,
        "document": document,
        "matches": [list(matches[cell]) for cell in all_cells()],
        "diagnostics": [_diagnostic_dict(d) for d in diagnostics],
        "source": _source_dict(loaded),
    }
    try:
        encoded = json.dumps(entry, ensure_ascii=False)
        decoded = json.loads(encoded)
        if decoded["document"] != document or decoded["source"]["data"] != loaded.data:
            return  # a value JSON cannot carry faithfully: compile this policy every time
        _write(path, encoded)
    except (OSError, TypeError, ValueError) as error:
        logger.debug("visiongate: compile cache entry %s not written: %s", path, error)


def _source_dict(loaded: LoadedYaml) -> dict[str, Any]:
    def rows(table: Mapping[DocumentPath, Location]) -> list[list[Any]]:
        return [[list(path), where.line, where.column] for path, where in table.items()]

    return {
        "data": loaded.data,
        "locations": rows(loaded.locations),
        "keys": rows(loaded.key_locations),
        "booleans": [[list(path), word] for path, word in loaded.boolean_words.items()],
        "diagnostics": [_diagnostic_dict(d) for d in loaded.diagnostics],
    }


def _diagnostic_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    # The path as a list, not `path_text`: its parts keep their types (a list index is an int).
    return {**diagnostic.as_dict(), "path": list(diagnostic.document_path)}


def _write(path: Path, encoded: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Not synced: an entry lost in a crash is only compiled again.
    replace_file(path, encoded.encode("utf-8"), prefix=".entry-", suffix=".tmp", sync=False)
    keep_newest(path.parent, "*.json", MAX_ENTRIES)
