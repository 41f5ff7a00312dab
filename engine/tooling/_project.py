"""The project configuration: where a project's policies and policy tests are, and lint levels.

Read, like ruff's, from the nearest directory (the working directory, then its parents) that
holds a `.visiongate.yaml` or a `pyproject.toml` with a `[tool.visiongate]` table; the first
found wins, `.visiongate.yaml` before `pyproject.toml`. Without one, the working directory is
the project and every default applies.

```toml
[tool.visiongate]
include = ["policies/**/*.yaml"]        # policy files (default: every *.yaml and *.yml)
exclude = ["policies/providers.yaml"]   # never policies, never tests
tests = ["policies/**/*.test.yaml"]     # policy test files (default: declared ones only)
docs = "policy_docs"                    # where `visiongate docs` writes pages

[tool.visiongate.lint]
severity = { gap = "error", contractible = "ignore" }
fail_level = "warning"
```

`.visiongate.yaml` holds the same keys at its top level. Patterns follow `.gitignore`: one
without `/` matches a name at any depth, one with `/` a path from the project root, and `**`
any number of directories. A configuration that cannot be read is a `PolicyError` (exit 3).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from visiongate.kernel._suggest import did_you_mean

from .._diagnostics import Diagnostic, Location, PolicyError
from .lint._codes import LINT_CODES, lint_code

CONFIG_FILE: Final = ".visiongate.yaml"
PYPROJECT: Final = "pyproject.toml"
DEFAULT_INCLUDE: Final = ("**/*.yaml", "**/*.yml")
LEVELS: Final = ("error", "warning", "info", "ignore")
FAIL_LEVELS: Final = ("error", "warning", "info")
KEYS: Final = ("include", "exclude", "tests", "docs", "lint")
LINT_KEYS: Final = ("severity", "fail_level")
# Never searched, besides hidden folders (version control, tool caches, `.venv`): build
# output, virtual environments and installed packages, as ruff's default `exclude` has it.
SKIPPED_DIRECTORIES: Final = frozenset(
    {
        "__pycache__",
        "__pypackages__",
        "_build",
        "buck-out",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)


@dataclass(frozen=True)
class Project:
    """A project's configuration, with every default filled in."""

    root: Path
    source: str | None = None
    """The file it was read from (`pyproject.toml`, `.visiongate.yaml`), None for defaults."""
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    tests: tuple[str, ...] | None = None
    """Policy test globs; None: only files that declare `visiongate: policy-test` are tests."""
    docs: str = "policy_docs"
    severity: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    fail_level: str | None = None

    def relative(self, path: Path) -> str | None:
        """`path` relative to the root, in POSIX form; None when it lies outside."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def excluded(self, relative: str) -> bool:
        return any(_matches(pattern, relative, parents=True) for pattern in self.exclude)

    def included(self, relative: str) -> bool:
        return any(_matches(pattern, relative) for pattern in self.include)

    def configured_test(self, relative: str) -> bool:
        """Whether the configured `tests` globs name this file."""
        return self.tests is not None and any(_matches(p, relative) for p in self.tests)

    @property
    def label(self) -> str:
        return f"{self.source} in {self.root}" if self.source else f"defaults in {self.root}"


def find_project(start: Path | None = None) -> Project:
    """The configuration of the project around `start` (default: the working directory)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        config = directory / CONFIG_FILE
        if config.is_file():
            return _from_yaml(config)
        pyproject = directory / PYPROJECT
        if pyproject.is_file():
            table = _tool_table(pyproject)
            if table is not None:
                return _build(directory, PYPROJECT, table, _TomlLocations(PYPROJECT))
    return Project(here)


# -- reading -------------------------------------------------------------------------------------


class _TomlLocations:
    """TOML carries no positions: every problem points at the file and its key path."""

    def __init__(self, file: str) -> None:
        self.file = file

    def location(self, path: tuple[str | int, ...]) -> Location:
        return Location(self.file)

    def prefix(self) -> tuple[str, ...]:
        return ("tool", "visiongate")


class _YamlLocations:
    def __init__(self, loaded: Any) -> None:
        self.loaded = loaded
        self.file = loaded.file

    def location(self, path: tuple[str | int, ...]) -> Location:
        return self.loaded.location(path, key=True)  # type: ignore[no-any-return]

    def prefix(self) -> tuple[str, ...]:
        return ()


_Locations = _TomlLocations | _YamlLocations


def _tool_table(pyproject: Path) -> Mapping[str, Any] | None:
    import tomllib

    try:
        document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise _error(PYPROJECT, f"cannot read `{pyproject}`: {_reason(error)}") from error
    except tomllib.TOMLDecodeError as error:
        raise _error(PYPROJECT, f"`{pyproject}` is not valid TOML: {error}") from error
    table = document.get("tool", {}).get("visiongate")
    if table is not None and not isinstance(table, dict):
        raise _error(PYPROJECT, "`tool.visiongate` must be a table")
    return table


def _from_yaml(config: Path) -> Project:
    from .._yaml import load_yaml

    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _error(CONFIG_FILE, f"cannot read `{config}`: {_reason(error)}") from error
    loaded = load_yaml(text, str(config))
    if loaded.diagnostics:
        raise PolicyError(loaded.diagnostics)
    data = loaded.data if loaded.data is not None else {}
    if not isinstance(data, dict):
        raise _error(str(config), "the project configuration must be a mapping of keys to values")
    return _build(config.parent, CONFIG_FILE, data, _YamlLocations(loaded))


def _build(root: Path, source: str, table: Mapping[str, Any], where: _Locations) -> Project:
    problems: list[Diagnostic] = []
    checker = _Checker(where, problems)
    checker.keys(table, KEYS, ())
    lint = checker.mapping(table.get("lint", {}), ("lint",))
    checker.keys(lint, LINT_KEYS, ("lint",))
    project = Project(
        root,
        source,
        include=checker.globs(table.get("include", DEFAULT_INCLUDE), ("include",)),
        exclude=checker.globs(table.get("exclude", ()), ("exclude",)),
        tests=checker.globs(table["tests"], ("tests",)) if "tests" in table else None,
        docs=checker.text(table.get("docs", "policy_docs"), ("docs",)),
        severity=MappingProxyType(checker.severity(lint.get("severity", {}))),
        fail_level=checker.choice(lint.get("fail_level"), FAIL_LEVELS, ("lint", "fail_level")),
    )
    if problems:
        raise PolicyError(problems)
    return project


@dataclass
class _Checker:
    """Checks the configuration by hand: it loads on every call, cerberus would cost more."""

    where: _Locations
    problems: list[Diagnostic]

    def report(self, path: tuple[str | int, ...], message: str, help_text: str = "") -> None:
        shown = ".".join(str(part) for part in (*self.where.prefix(), *path))
        self.problems.append(
            Diagnostic(
                "bad-project-config",
                "error",
                f"{message} (`{shown}`)" if shown else message,
                self.where.location(path),
                path,
                help=help_text,
            )
        )

    def keys(self, table: Mapping[str, Any], allowed: Sequence[str], path: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                self.report((*path, key), f"unknown key `{key}`", did_you_mean(key, allowed))

    def mapping(self, value: Any, path: tuple[str, ...]) -> Mapping[str, Any]:
        if isinstance(value, dict):
            return value
        self.report(path, "expected a table of keys and values")
        return {}

    def globs(self, value: Any, path: tuple[str, ...]) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value):
            return tuple(value)
        self.report(path, "expected a list of glob patterns", 'e.g. ["policies/**/*.yaml"]')
        return ()

    def text(self, value: Any, path: tuple[str, ...]) -> str:
        if isinstance(value, str) and value:
            return value
        self.report(path, "expected a non-empty string")
        return "policy_docs"

    def choice(self, value: Any, allowed: Sequence[str], path: tuple[str, ...]) -> str | None:
        if value is None or value in allowed:
            return value  # type: ignore[no-any-return]
        self.report(path, f"unknown level `{value}`", did_you_mean(value, allowed))
        return None

    def severity(self, value: Any) -> dict[str, str]:
        found: dict[str, str] = {}
        for code, level in self.mapping(value, ("lint", "severity")).items():
            path = ("lint", "severity", code)
            if code not in LINT_CODES:
                self.report(
                    path, f"unknown lint code `{code}`", did_you_mean(code, list(LINT_CODES))
                )
            elif level not in LEVELS:
                self.report(path, f"unknown level `{level}`", did_you_mean(level, LEVELS))
            elif lint_code(code).fixed and level != "error":
                self.report(path, f"`{code}` is a load error; its level cannot be changed")
            else:
                found[code] = level
        return found


def _error(file: str, message: str) -> PolicyError:
    return PolicyError([Diagnostic("bad-project-config", "error", message, Location(file))])


def _reason(error: OSError | UnicodeDecodeError) -> str:
    text = getattr(error, "strerror", None) or "not UTF-8 text"
    return text[:1].lower() + text[1:]


# -- patterns ------------------------------------------------------------------------------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A `.gitignore`-style glob as a regular expression over POSIX relative paths."""
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        else:
            out.append(_glob_piece(pattern, index))
            index += _piece_length(pattern, index)
    return re.compile("".join(out))


def _piece_length(pattern: str, index: int) -> int:
    if pattern[index] == "[":
        end = pattern.find("]", index + 2)
        return end - index + 1 if end != -1 else 1
    return 1


def _glob_piece(pattern: str, index: int) -> str:
    char = pattern[index]
    if char == "*":
        return "[^/]*"
    if char == "?":
        return "[^/]"
    length = _piece_length(pattern, index)
    if char == "[" and length > 1:
        body = pattern[index + 1 : index + length - 1]
        return "[" + ("^" + body[1:] if body.startswith("!") else body) + "]"
    return re.escape(char)


def _matches(pattern: str, relative: str, *, parents: bool = False) -> bool:
    """Whether `pattern` names `relative` (with `parents`, also any directory above it)."""
    anchored = "/" in pattern.rstrip("/")
    regex = glob_regex(pattern.strip("/") if anchored else pattern.rstrip("/"))
    parts = relative.split("/")
    if anchored:
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        candidates = prefixes if parents else [relative]
    else:
        candidates = parts if parents else parts[-1:]
    return any(regex.fullmatch(candidate) for candidate in candidates)


def walk_files(directory: Path) -> list[Path]:
    """Every file under `directory`, outside hidden and skipped directories, sorted."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = sorted(
            name
            for name in subfolders
            if not name.startswith(".") and name not in SKIPPED_DIRECTORIES
        )
        found += [Path(folder) / name for name in files]
    return sorted(found)
