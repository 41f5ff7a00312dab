"""Finding a project's policy files and policy test files, and recognizing them by content.

A file is a policy when it reads like one, not when a line starts with `policy:`: its
top-level keys are, or nearly are, the policy language's (`polcy:` still counts, so a
misspelt key is reported by lint instead of the file being skipped), and it has a
`hit_policy` or rules with a `lane` or a `when`. Unrelated YAML that happens to have a
top-level `policy:` key is not one. A file named on the command line is always linted; these
rules decide what a directory search or the project's `include` globs yield.

A policy test file is one that declares `visiongate: policy-test`, or one the project's
`tests` globs name: the same rule the pytest plugin follows, so `visiongate test` and pytest
run the same files. A `*.test.yaml` that looks like a policy test but does neither is
reported as skipped, never silently ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from visiongate.kernel._errors import VisiongateError
from visiongate.kernel._files import read_regular_file
from visiongate.kernel._suggest import closest

from ._project import Project, walk_files

TEST_SUFFIXES: Final = (".test.yaml", ".test.yml")
YAML_SUFFIXES: Final = (".yaml", ".yml")
POLICY_REQUIRED: Final = ("policy", "version", "description", "hit_policy", "default", "rules")
POLICY_KEYS: Final = (*POLICY_REQUIRED, "invariants", "execution", "sanitize", "lint")
_HEAD_BYTES: Final = 1 << 20
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)[ \t]*:(?:[ \t]|$)", re.M)
_RULE_ENTRY = re.compile(r"\b(?:lane|when)[ \t]*:")
# The declaration, as a top-level key at the start of a line: quoted or not, any spacing.
_DECLARATION = re.compile(r"^visiongate[ \t]*:[ \t]*['\"]?policy-test['\"]?[ \t]*(#.*)?$", re.M)


def top_level_keys(text: str) -> list[str]:
    """The keys of a block mapping at column 0 (read from the text: broken YAML still counts)."""
    return [match.group("key") for match in _TOP_KEY.finditer(text)]


def declares_policy_test(text: str) -> bool:
    return _DECLARATION.search(text) is not None


def looks_like_policy_test(text: str) -> bool:
    keys = set(top_level_keys(text))
    return declares_policy_test(text) or {"policy", "cases"} <= keys


def _policy_key(key: str) -> str | None:
    if key in POLICY_KEYS:
        return key
    return closest(key, POLICY_KEYS, cutoff=0.8)


def looks_like_policy(text: str) -> bool:
    """Three or more of the required keys (or near misses), and a policy's rule structure."""
    if looks_like_policy_test(text):
        return False
    known = {found for key in top_level_keys(text) if (found := _policy_key(key)) is not None}
    required = known & set(POLICY_REQUIRED)
    shaped = "hit_policy" in known or _RULE_ENTRY.search(text) is not None
    return len(required) >= 3 and shaped


def read_head(path: Path) -> str | None:
    """The start of a file as text, or None when it cannot be read (lint reports that)."""
    try:  # a FIFO among the files would block a plain `open` for ever: refused unread
        return read_regular_file(path, _HEAD_BYTES, whole=False).decode("utf-8", "replace")
    except OSError:
        return None


def is_test_name(path: Path) -> bool:
    return path.name.endswith(TEST_SUFFIXES)


@dataclass(frozen=True)
class Found:
    """Files found, the places searched, and files passed over with the reason."""

    files: tuple[Path, ...]
    searched: tuple[str, ...]
    skipped: tuple[tuple[Path, str], ...] = ()


class MissingPathError(VisiongateError, ValueError):
    """A path named on the command line does not exist."""


def _relative(project: Project, path: Path, base: Path) -> str:
    inside = project.relative(path)
    return inside if inside is not None else path.relative_to(base).as_posix()


def _check_exists(paths: Sequence[str | Path]) -> None:
    for path in paths:
        if not Path(path).exists():
            raise MissingPathError(f"cannot read `{path}`: no such file or directory")


def find_policies(
    project: Project, paths: Sequence[str | Path] = (), *, policies_only: bool = False
) -> Found:
    """Policy files: named files as given (with `policies_only`, only those that read like a
    policy and that `exclude` leaves); directories, or the project root, searched."""
    _check_exists(paths)
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    targets = [Path(p) for p in paths] or [project.root]
    for target in targets:
        if target.is_dir():
            _search_policies(project, target, files, skipped)
        elif not policies_only or _named_policy(project, target, skipped):
            files.append(target)
    searched = tuple(_shown(t) for t in targets)
    return Found(tuple(dict.fromkeys(files)), searched, tuple(skipped))


def _named_policy(project: Project, path: Path, skipped: list[tuple[Path, str]]) -> bool:
    relative = project.relative(path)
    if relative is not None and project.excluded(relative):
        skipped.append((path, "excluded by the project configuration"))
        return False
    text = read_head(path)
    if text is not None and not looks_like_policy(text):
        skipped.append((path, "not a policy file"))
        return False
    return True


def _search_policies(
    project: Project, directory: Path, files: list[Path], skipped: list[tuple[Path, str]]
) -> None:
    for path in walk_files(directory):
        relative = _relative(project, path, directory)
        if not path.name.endswith(YAML_SUFFIXES) or is_test_name(path):
            continue
        if project.excluded(relative) or not project.included(relative):
            continue
        if project.configured_test(relative):
            continue
        text = read_head(path)
        if text is None or looks_like_policy(text):
            files.append(path)  # an unreadable file is linted, so that lint reports it
        elif looks_like_policy_test(text):
            continue
        else:
            skipped.append((path, "not a policy file"))


def find_tests(project: Project, paths: Sequence[str | Path] = ()) -> Found:
    """Policy test files: named files as given; directories, or the project root, searched."""
    _check_exists(paths)
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    targets = [Path(p) for p in paths] or [project.root]
    for target in targets:
        if not target.is_dir():
            files.append(target)
            continue
        for path in walk_files(target):
            verdict = _test_verdict(project, path, target)
            if verdict is True:
                files.append(path)
            elif verdict:
                skipped.append((path, verdict))
    searched = tuple(_shown(t) for t in targets)
    return Found(tuple(dict.fromkeys(files)), searched, tuple(skipped))


def _test_verdict(project: Project, path: Path, base: Path) -> bool | str:
    """True for a policy test; a reason when it is skipped but looks like one; else False."""
    relative = _relative(project, path, base)
    if project.excluded(relative):
        return False
    if project.configured_test(relative):
        return True
    if not is_test_name(path):
        return False
    text = read_head(path) or ""
    if declares_policy_test(text):
        return True
    if looks_like_policy_test(text):
        return (
            "looks like a policy test but does not declare `visiongate: policy-test` "
            "(nor do the project's `tests` globs name it)"
        )
    return False


def display_path(path: str | Path) -> str:
    """A path as shown in findings (lint, test, fmt, docs): relative to the working
    directory when inside it."""
    candidate = Path(path)
    if candidate.is_absolute():
        try:
            candidate = candidate.relative_to(Path.cwd())
        except ValueError:
            return candidate.as_posix()
    return os.path.normpath(candidate).replace(os.sep, "/")


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return path.as_posix()
