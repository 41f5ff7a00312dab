"""`visiongate docs [PATH ...]`: generate (or check) one Markdown page per policy."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_OK
from visiongate.cli._common import UsageError, checked, output_directory
from visiongate.cli.policy import policy_files

if TYPE_CHECKING:
    from visiongate.engine.tooling._docs import DocPage


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="policy files or directories (default: the project's policy files)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="where the pages go (default: the project's `docs`, else policy_docs)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a page is missing or out of date",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine.tooling._docs import generate_pages
    from visiongate.engine.tooling._project import find_project

    project = checked(find_project)
    files = policy_files(project, args.paths)
    out = Path(args.out) if args.out else project.root / project.docs
    if not args.check:
        output_directory(out)
    elif out.exists() and not out.is_dir():
        raise UsageError(f"`{args.out or out}` is a file, not a directory")
    pages = checked(lambda: generate_pages(files, project.root))
    return _check(out, pages, not args.paths) if args.check else _write(out, pages)


def _check(out: Path, pages: Sequence[DocPage], orphans: bool) -> int:
    from visiongate.engine.tooling._docs import stale_pages

    stale = stale_pages(out, pages, orphans)
    for why, path in stale:
        note = " (no policy generates it any more)" if why == "orphaned" else ""
        print(f"{why}: {_shown(path)}{note}")
    if stale:
        print("policy docs are out of date: run `visiongate docs` and commit the result")
        return EXIT_FINDINGS
    print(f"{_policy_pages(pages)} policy page(s) up to date in {_shown(out)}")
    return EXIT_OK


def _policy_pages(pages: Sequence[DocPage]) -> int:
    """Pages, not counting the grid picture beside each one."""
    return sum(page.relative_path.endswith(".md") for page in pages)


def _shown(path: str | Path) -> str:
    from visiongate.engine.tooling._discover import display_path

    return display_path(path)


def _write(out: Path, pages: Sequence[DocPage]) -> int:
    from visiongate.engine.tooling._docs import write_pages

    try:
        written = write_pages(out, pages)
    except OSError as error:
        raise UsageError(f"cannot write the pages in `{out}`: {error.strerror}") from None
    for path in written:
        print(f"wrote {_shown(path)}")
    print(f"{_policy_pages(pages)} policy page(s) in {_shown(out)}, {len(written)} changed")
    return EXIT_OK
