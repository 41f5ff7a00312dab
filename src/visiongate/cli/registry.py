"""`visiongate registry show PROVIDER [MODEL]`: verdicts, their evidence and their sources.

A provider the registry does not list is a failed look-up: one line with the near name (or
what would make it route) and exit 2."""

from __future__ import annotations

import argparse
from typing import Any

from visiongate.cli import EXIT_OK
from visiongate.cli._common import (
    UsageError,
    add_gate_arguments,
    check_gate_inputs,
    checked,
    print_json,
)

SCHEMA_VERSION = 1


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    show = actions.add_parser(
        "show", allow_abbrev=False, help="a provider's entry, or one model's resolved route"
    )
    show.add_argument("provider", metavar="PROVIDER", help="provider id or alias")
    show.add_argument("model", metavar="MODEL", nargs="?", help="model id: show its route")
    add_gate_arguments(show)
    show.add_argument(
        "--routes", help="learned routes file (default: the config's, else state dir)"
    )
    show.add_argument("--json", action="store_true", help="print JSON")


def _print(document: dict[str, Any], as_json: bool, render: Any) -> None:
    if as_json:
        print_json({"schema_version": SCHEMA_VERSION, **document})
    else:
        print(render(document))


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import Gate
    from visiongate.engine.tooling._registry_show import (
        entry_document,
        render_entry,
        render_route,
        route_document,
    )

    if args.action != "show":
        raise UsageError("give an action: `show PROVIDER [MODEL]`")
    check_gate_inputs(args)
    gate = checked(
        lambda: Gate.load(args.policy, args.config, args.catalog, args.registry, routes=args.routes)
    )
    if args.model:
        resolved = gate.resolver.resolve(args.provider, args.model)
        _print(route_document(gate.resolver, resolved), args.json, render_route)
        return EXIT_OK
    registry = gate.resolver.registry
    entry = registry.entries.get(registry.canonical(args.provider))
    if entry is None:
        raise UsageError(_not_listed(registry.canonical(args.provider), registry))
    _print(entry_document(registry, entry), args.json, render_entry)
    return EXIT_OK


def _not_listed(name: str, registry: Any) -> str:
    """One line: the near name when there is one, else what makes such a provider route."""
    import difflib

    from visiongate.engine.facts._resolver import NEAR_NAME  # what decisions call a typo
    from visiongate.kernel._display import visible

    close = difflib.get_close_matches(name, sorted(registry.names), n=1, cutoff=NEAR_NAME)
    hint = f"did you mean `{close[0]}`?" if close else ""
    if not close:
        hint = (
            f"it refuses, unless the agent config declares it (`providers.{name}."
            "tool_result_images`) or a model of it `supports_vision: true`"
        )
    return visible(f"`{name}` is not in {registry.label}: {hint}")
