"""`visiongate explain`: the whole decision table of a policy, every cell with its lane and rule."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_OK
from visiongate.cli._common import (
    add_format_arguments,
    checked,
    chosen_format,
    policy_reference,
    print_json,
)
from visiongate.cli.policy import PICTURES


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file or bundled name (default: `default`)")
    add_format_arguments(
        parser,
        ("text", "json", *PICTURES),
        "output format: the table as text or JSON, or as a picture (html, svg, markdown)",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import load_policy
    from visiongate.engine.tooling._explain import render_table, table_document

    args.format = chosen_format(args)  # `--json` is `--format json`
    policy = policy_reference(args.policy) if args.policy is not None else None
    compiled = checked(lambda: load_policy(policy))
    form = args.format
    if form in PICTURES:
        from visiongate.engine.tooling.pictures import render_table_picture

        print(render_table_picture(compiled, form), end="")
    elif form == "json":
        print_json(table_document(compiled))
    else:
        print(render_table(compiled))
    return EXIT_OK
