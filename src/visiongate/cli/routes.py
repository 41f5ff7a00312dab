"""`visiongate routes list|forget`: the routes this machine learned or settled by probe."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_OK
from visiongate.cli._common import UsageError, check_gate_inputs, checked, print_json, reason

if TYPE_CHECKING:
    from visiongate.engine import Gate

SCHEMA_VERSION = 1


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="agent config YAML (its `visiongate.routes_file`)")
    parser.add_argument("--registry", help="provider registry YAML (default: bundled)")
    parser.add_argument("--routes", help="routes file (default: the config's, else state dir)")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", allow_abbrev=False, help="every learned or probed route")
    _common(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")
    forget = actions.add_parser(
        "forget", allow_abbrev=False, help="drop the route of one provider and model"
    )
    forget.add_argument("provider", metavar="PROVIDER")
    forget.add_argument("model", metavar="MODEL")
    _common(forget)


def run(args: argparse.Namespace) -> int:
    from visiongate.engine import Gate

    if args.action not in ("list", "forget"):
        raise UsageError("give an action: `list` or `forget PROVIDER MODEL`")
    check_gate_inputs(args)
    gate = checked(
        lambda: Gate.load(config=args.config, registry=args.registry, routes=args.routes)
    )
    overlay = gate.resolver.routes
    if args.action == "list":
        return _list(gate, args.json)
    provider = gate.resolver.locate(args.provider, args.model).provider
    try:
        forgotten = overlay.forget(provider, args.model)
    except ValueError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(
            f"cannot change the routes file `{overlay.path}`: {reason(error)}"
        ) from None
    if not forgotten:
        name = f"`{provider}` / `{args.model.strip()}`"
        print(f"no learned or probed route for {name} in {overlay.path}")
        return EXIT_FINDINGS
    print(f"forgot `{provider}` / `{args.model.strip()}` ({overlay.path})")
    return EXIT_OK


def _list(gate: Gate, as_json: bool) -> int:
    overlay = gate.resolver.routes
    entries = overlay.entries()
    if as_json:
        print_json(
            {
                "schema_version": SCHEMA_VERSION,
                "file": str(overlay.path) if overlay.path is not None else None,
                "problem": overlay.problem,
                "routes": [asdict(entry) for entry in entries],
            }
        )
        return EXIT_OK
    if overlay.problem:
        print(f"warning: {overlay.problem}")
    if not entries:
        print(f"no learned or probed routes in {overlay.path}")
        return EXIT_OK
    width = max(len(f"{entry.provider} / {entry.model}") for entry in entries)
    for entry in entries:
        name = f"{entry.provider} / {entry.model}"
        print(f"{name:<{width}}  {entry.verdict:<7}  {entry.provenance}")
    print(f"{len(entries)} route(s) in {overlay.path}")
    return EXIT_OK
