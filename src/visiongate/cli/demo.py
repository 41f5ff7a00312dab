"""`visiongate demo`: the mission end to end, offline, on the embedded defaults."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from visiongate.cli import EXIT_OK
from visiongate.cli._common import output_directory

HELP = "run the whole mission end to end, offline: real MCP server, gate, images, OCR, payloads"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default="visiongate-demo",
        help="folder for the provider payloads and the JSONL trace (default: ./visiongate-demo)",
    )


def run(args: argparse.Namespace) -> int:
    from visiongate._demo import excerpt, legend, render_table, run_demo, summary_rows

    output_directory(args.out)  # a file in the way, or no permission: one line, exit 2
    out = Path(args.out).resolve()
    print("visiongate demo: one gate decides for every image source (bundled policy, catalog,")
    print("provider registry; local OCR as the auxiliary vision backend; no network)\n")
    outcomes = asyncio.run(run_demo(out, sys.stderr))
    print()
    print(render_table(summary_rows(outcomes)))
    print(legend(outcomes))
    print("\nwhat the text-only model reads for the computer-use capture (no pixels):")
    print(excerpt(outcomes, "text-only-capture"))
    print()
    print(f"payloads: {out / 'payloads'}/ ({len(outcomes)} files, one per scenario)")
    print(f"trace:    {out / 'trace.jsonl'} (audit it: visiongate audit {out / 'trace.jsonl'})")
    return EXIT_OK
