"""`visiongate fmt [--check] [--diff] [PATH ...]`: one canonical layout, like `opa fmt`."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK
from visiongate.cli._common import UsageError, checked, write_output

if TYPE_CHECKING:
    from visiongate.engine.tooling._project import Project
    from visiongate.engine.tooling.fmt._format import Formatted


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="policy and policy test files or directories (default: the project's)",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    parser.add_argument(
        "--diff", action="store_true", help="write nothing; print the changes as a diff"
    )
    parser.add_argument(
        "--policies-only",
        action="store_true",
        help="skip named files that are neither policies nor policy tests (for pre-commit)",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine.tooling._project import find_project

    project = checked(find_project)
    files = _files(args, project)
    failed = 0
    changed: list[Formatted] = []
    for path in files:
        result = _format(path)
        if result is None:
            failed += 1
        elif result.changed:
            changed.append(result)
    _report(args, changed, len(files) - failed)
    if failed:
        return EXIT_INVALID_POLICY
    return EXIT_FINDINGS if changed and (args.check or args.diff) else EXIT_OK


def _format(path: Path) -> Formatted | None:
    """The formatted file, or None when it cannot be parsed (reported; exit 3 at the end)."""
    from visiongate.engine.tooling._discover import display_path
    from visiongate.engine.tooling.fmt._format import FormatError, NotPolicyError, format_file

    try:
        return format_file(path, display_path(path))
    except NotPolicyError as error:
        raise UsageError(f"{error}; --policies-only skips such files") from None
    except FormatError as error:
        print(
            error.render() if error.diagnostics else f"visiongate fmt: error: {error}",
            file=sys.stderr,
        )
    except OSError as error:
        raise UsageError(f"cannot read `{path}`: {error.strerror}") from None
    return None


def _report(args: argparse.Namespace, changed: list[Formatted], total: int) -> None:
    from visiongate.engine.tooling._discover import display_path

    for result in changed:
        shown = display_path(result.path)
        if args.diff:
            sys.stdout.writelines(
                difflib.unified_diff(
                    result.original.splitlines(keepends=True),
                    result.text.splitlines(keepends=True),
                    f"{shown} (original)",
                    f"{shown} (formatted)",
                )
            )
        elif args.check:
            print(f"would reformat {shown}")
        else:
            write_output(result.path, result.text)
            print(f"reformatted {shown}")
    verb = "would be reformatted" if args.check or args.diff else "reformatted"
    print(f"{len(changed)} file(s) {verb}, {total - len(changed)} left unchanged")


def _files(args: argparse.Namespace, project: Project) -> list[Path]:
    """Directories (or the project) searched for policies and policy tests; named files as
    given (with `--policies-only`, only those that are either and that `exclude` leaves)."""
    from visiongate.engine.tooling._discover import MissingPathError, find_policies, find_tests

    directories = [path for path in args.paths if Path(path).is_dir()]
    named = [Path(path) for path in args.paths if not Path(path).is_dir()]
    files: list[Path] = []
    try:
        if not args.paths or directories:
            files += find_policies(project, directories).files
            files += find_tests(project, directories).files
        files += find_policies(project, named, policies_only=False).files if named else ()
    except MissingPathError as error:
        raise UsageError(str(error)) from None
    if args.policies_only:
        files = [path for path in files if _formattable(project, path)]
    elif not files:
        where = ", ".join(f"`{p}`" for p in args.paths) or f"`{project.root}`"
        raise UsageError(
            f"no policy or policy test files found under {where}; check include/exclude "
            f"({project.label})"
        )
    return list(dict.fromkeys(files))


def _formattable(project: Project, path: Path) -> bool:
    from visiongate.engine.tooling._discover import read_head
    from visiongate.engine.tooling.fmt._format import kind_of

    relative = project.relative(path)
    if relative is not None and project.excluded(relative):
        return False
    text = read_head(path)
    return text is not None and kind_of(text) is not None
