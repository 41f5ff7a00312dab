"""`visiongate diff OLD NEW`: every cell whose lane changes between two policy versions."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_FINDINGS, EXIT_OK
from visiongate.cli._common import add_format_arguments, checked, chosen_format
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
    from visiongate.engine.tooling._diff import diff_sources, render_json, render_text

    args.format = chosen_format(args)  # `--json` is `--format json`
    # A source that cannot be read is a usage error (2), a policy that fails to load 3.
    diff = checked(lambda: diff_sources(args.old, args.new))
    form = args.format
    if form in PICTURES:
        from visiongate.engine.tooling.pictures import render_diff_picture

        print(render_diff_picture(diff, form), end="")
    else:
        print(render_json(diff) if form == "json" else render_text(diff))
    return EXIT_FINDINGS if diff.lane_changes else EXIT_OK
