"""`visiongate explain`: the whole decision table of a policy, every cell with its lane and rule."""

from __future__ import annotations

import argparse

from visiongate.cli import EXIT_OK
from visiongate.cli._common import guarded, policy_reference, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", help="policy file or bundled name (default: `default`)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import CompiledPolicy, load_policy
    from visiongate.engine.tooling._explain import render_table, table_document

    policy = policy_reference(args.policy) if args.policy is not None else None
    compiled = guarded(lambda: load_policy(policy))
    if not isinstance(compiled, CompiledPolicy):
        return compiled
    if args.json:
        print_json(table_document(compiled))
    else:
        print(render_table(compiled))
    return EXIT_OK
