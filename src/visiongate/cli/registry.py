"""`visiongate registry show PROVIDER [MODEL]`: verdicts, their evidence and their sources."""

from __future__ import annotations

import argparse
import json

from visiongate.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from visiongate.cli._common import add_gate_arguments, guarded
from visiongate.engine import Gate
from visiongate.engine.tooling._registry_show import (
    entry_document,
    render_entry,
    render_route,
    route_document,
)

HELP = "show a provider's route verdicts with their evidence, or the route of one model"


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser("show", help="a provider's entry, or one model's resolved route")
    show.add_argument("provider", metavar="PROVIDER", help="provider id or alias")
    show.add_argument("model", metavar="MODEL", nargs="?", help="model id: show its route")
    add_gate_arguments(show)
    show.add_argument(
        "--routes", help="learned routes file (default: the config's, else state dir)"
    )
    show.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    if args.action != "show":
        print("visiongate registry: give an action: `show PROVIDER [MODEL]`")
        return EXIT_USAGE
    result = guarded(
        lambda: Gate.load(args.policy, args.config, args.catalog, args.registry, routes=args.routes)
    )
    if isinstance(result, int):
        return result
    gate = result
    if args.model:
        resolved = gate.resolver.resolve(args.provider, args.model)
        document = route_document(gate.resolver, resolved)
        print(json.dumps(document, indent=2) if args.json else render_route(document))
        return EXIT_OK
    registry = gate.resolver.registry
    entry = registry.entries.get(registry.canonical(args.provider))
    if entry is None:
        name = registry.canonical(args.provider)
        print(
            f"`{name}` is not in {registry.label}: it refuses, unless the agent config declares "
            f"it (`providers.{name}.tool_result_images`) or a model of it `supports_vision: true`"
        )
        return EXIT_FINDINGS
    document = entry_document(registry, entry)
    print(json.dumps(document, indent=2) if args.json else render_entry(document))
    return EXIT_OK
