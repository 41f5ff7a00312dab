"""`visiongate explain`: the whole decision table of a policy, every cell with its lane and rule."""

from __future__ import annotations

import argparse
import json

from visiongate.cli import EXIT_OK
from visiongate.cli._common import guarded
from visiongate.engine import CompiledPolicy, load_policy
from visiongate.engine.tooling._explain import render_table, table_records

HELP = "print the whole decision table of a policy (every cell, its lane and rule)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file or bundled name (default: `default`)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


def run(args: argparse.Namespace) -> int:
    compiled = guarded(lambda: load_policy(args.policy))
    if not isinstance(compiled, CompiledPolicy):
        return compiled
    if args.json:
        print(json.dumps(table_records(compiled), indent=2))
    else:
        print(render_table(compiled))
    return EXIT_OK
