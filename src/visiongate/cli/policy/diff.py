"""`visiongate diff OLD NEW`: every cell whose lane changes between two policy versions."""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_FINDINGS, EXIT_INVALID_POLICY, EXIT_OK
from visiongate.cli._common import UsageError, add_format_arguments, chosen_format
from visiongate.cli.policy import PICTURES


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="file, bundled name, or git `REV:PATH`")
    parser.add_argument("new", metavar="NEW", help="file, bundled name, or git `REV:PATH`")
    add_format_arguments(
        parser,
        ("text", "json", *PICTURES),
        "output format: text, JSON, or the grid with the changes marked (markdown for a "
        "pull request comment or the job summary, html, svg)",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import PolicyError
    from visiongate.engine.tooling._diff import diff_sources, render_json, render_text
    from visiongate.engine.tooling._sources import SourceError

    args.format = chosen_format(args)  # `--json` is `--format json`
    try:
        diff = diff_sources(args.old, args.new)
    except SourceError as error:
        raise UsageError(str(error)) from None
    except PolicyError as error:
        print(error.render(), file=sys.stderr)
        return EXIT_INVALID_POLICY
    form = args.format
    if form in PICTURES:
        from visiongate.engine.tooling.pictures import render_diff_picture

        print(render_diff_picture(diff, form), end="")
    else:
        print(render_json(diff) if form == "json" else render_text(diff))
    return EXIT_FINDINGS if diff.lane_changes else EXIT_OK
