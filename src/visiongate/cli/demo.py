"""`visiongate demo`: the mission end to end, offline, on the embedded defaults."""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_OK, EXIT_USAGE
from visiongate.cli._common import output_directory


def configure(parser: argparse.ArgumentParser) -> None:
    from visiongate.cli.mcp import add_limit_arguments

    parser.add_argument(
        "--out",
        default="visiongate-demo",
        help="folder for the provider payloads and the JSONL trace (default: ./visiongate-demo)",
    )
    add_limit_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from visiongate._demo import (
        SUMMARY_PROSE,
        excerpt,
        legend,
        run_demo,
        summary_block,
        summary_rows,
        write_pictures,
    )
    from visiongate._demo_proxy import run_proxy_scenario
    from visiongate._demo_table import render_table, terminal_width, wrap
    from visiongate.adapters.mcp._session import McpLimits
    from visiongate.cli._signals import Interrupted, run_until_signal

    output_directory(args.out)  # a file in the way, or no permission: one line, exit 2
    out = Path(args.out).resolve()
    width = terminal_width()

    def say(text: str = "", indent: str = "") -> None:
        print(wrap(text, width, indent))  # within the terminal, cut at words

    say(
        "visiongate demo: one gate decides for every image source (bundled policy, catalog, "
        "provider registry; local OCR as the auxiliary vision backend; no network)"
    )
    say()
    try:
        limits = McpLimits.of(args.timeout, args.connect_timeout, args.max_message_bytes)
        outcomes = run_until_signal(lambda: run_demo(out, sys.stderr, limits))
        proxied = run_until_signal(lambda: run_proxy_scenario(out, sys.stderr, limits))
    except Interrupted as stopped:
        print(f"visiongate demo: {stopped}; the example server was stopped", file=sys.stderr)
        return stopped.exit_code
    except (OSError, ValueError) as error:
        # A server that hangs or answers wrongly ends the demo with one line, not a traceback.
        print(f"visiongate demo: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    say()
    print(render_table(summary_rows(outcomes), width, prose=SUMMARY_PROSE, block=summary_block))
    say(legend(outcomes), "  ")
    say()
    say("what the text-only model reads for the computer-use capture (no pixels):")
    print(excerpt(outcomes, "text-only-capture"))
    say()
    say("the same gate in front of any MCP client, through `visiongate proxy`:")
    for line in proxied.lines():
        say(line, "    ")
    say()
    files = " " * 10
    say(f"payloads: {out / 'payloads'}/ ({len(outcomes)} files, one per scenario)", files)
    say(
        f"trace:    {out / 'trace.jsonl'} (audit it: visiongate audit {out / 'trace.jsonl'})", files
    )
    pictures = write_pictures(out)
    say(f"table:    {pictures.table} (the decision grid; SVG: {pictures.table_svg.name})", files)
    say(f"report:   {pictures.report} (the audit of this trace, open it in a browser)", files)
    return EXIT_OK
