"""`visiongate docs`: generate (or check) one Markdown page per shipped policy."""

from __future__ import annotations

import argparse
from pathlib import Path

from visiongate.cli import EXIT_FINDINGS, EXIT_OK
from visiongate.engine.tooling._docs import generate_pages, stale_pages, write_pages

HELP = "generate policy_docs/<policy>.md for every shipped policy (--check: fail if stale)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default="policy_docs",
        metavar="DIR",
        help="where the pages go (default: policy_docs)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a page is missing or out of date",
    )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    pages = generate_pages()
    if args.check:
        stale = stale_pages(out, pages)
        for path in stale:
            print(f"stale: {path}")
        if stale:
            print("policy docs are out of date: run `visiongate docs` and commit the result")
            return EXIT_FINDINGS
        print(f"{len(pages)} policy page(s) up to date in {out.as_posix()}")
        return EXIT_OK
    written = write_pages(out, pages)
    for path in written:
        print(f"wrote {path}")
    print(f"{len(pages)} policy page(s) in {out.as_posix()}, {len(written)} changed")
    return EXIT_OK
