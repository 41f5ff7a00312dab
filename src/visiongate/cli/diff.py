"""`visiongate diff OLD NEW`: every cell whose lane changes between two policy versions."""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK, EXIT_USAGE
from visiongate.engine import PolicyError
from visiongate.engine.tooling._diff import SourceError, diff_sources, render_json, render_text
from visiongate.engine.tooling.pictures import PICTURES, render_diff_picture

HELP = "compare two policy versions cell by cell (exit 1 when any lane changes)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="file, bundled name, or git `REV:PATH`")
    parser.add_argument("new", metavar="NEW", help="file, bundled name, or git `REV:PATH`")
    parser.add_argument("--json", action="store_true", help="print the difference as JSON")
    parser.add_argument(
        "--format",
        choices=("text", "json", *PICTURES),
        default="text",
        help="output format: text, JSON, or the grid with the changes marked (markdown for a "
        "pull request comment or the job summary, html, svg)",
    )


def run(args: argparse.Namespace) -> int:
    try:
        diff = diff_sources(args.old, args.new)
    except SourceError as error:
        print(f"visiongate diff: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except PolicyError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_INVALID_POLICY
    if args.format in PICTURES:
        print(render_diff_picture(diff, args.format), end="")
    else:
        print(render_json(diff) if args.json or args.format == "json" else render_text(diff))
    return EXIT_FINDINGS if diff.lane_changes else EXIT_OK
