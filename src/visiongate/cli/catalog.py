"""`visiongate catalog update|show`: refresh the model catalog, or see what it knows.

`update` fetches models.dev's `api.json` (or `--url`, or `$VISIONGATE_CATALOG_URL`), checks
its shape and stores it in the user cache; a failed, slow, oversized or misshapen fetch
keeps the catalog in use, says why in one line and exits 2. `show PROVIDER [MODEL]` prints
what the catalog in use says, and which catalog that is (bundled or refreshed, and its date).
"""

from __future__ import annotations

import argparse
import sys

from visiongate.cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from visiongate.cli._common import UsageError, print_json

SCHEMA_VERSION = 1


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    update = actions.add_parser(
        "update", allow_abbrev=False, help="fetch models.dev's catalog into the user cache"
    )
    update.add_argument(
        "--url", help="catalog URL (default: $VISIONGATE_CATALOG_URL, else models.dev)"
    )
    update.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="deadline of the fetch"
    )
    update.add_argument("--json", action="store_true", help="print JSON")
    show = actions.add_parser(
        "show", allow_abbrev=False, help="what the catalog in use says about a provider or model"
    )
    show.add_argument("provider", metavar="PROVIDER", help="catalog provider id, e.g. `openai`")
    show.add_argument("model", metavar="MODEL", nargs="?", help="model id: show its answer")
    show.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    if args.action == "update":
        return _update(args)
    if args.action == "show":
        return _show(args)
    raise UsageError("give an action: `update [--url URL]` or `show PROVIDER [MODEL]`")


def _update(args: argparse.Namespace) -> int:
    from visiongate.engine.facts._catalog_store import (
        CatalogUpdateError,
        current_catalog,
        update_catalog,
    )

    try:
        done = update_catalog(args.url, deadline=args.timeout)
    except CatalogUpdateError as error:
        # `current_catalog` never raises: an unusable refreshed copy falls back to the bundled one.
        label = current_catalog().label
        print(f"visiongate catalog: {error}; still using {label}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print_json(
            {
                "schema_version": SCHEMA_VERSION,
                "file": str(done.path),
                "url": done.url,
                "date": done.date,
                "providers": done.providers,
                "models": done.models,
                "new_models": list(done.new_models),
            }
        )
        return EXIT_OK
    print(
        f"catalog updated from {done.url} at {done.date}: {done.models} models of "
        f"{done.providers} providers, {len(done.new_models)} new; stored in {done.path}"
    )
    for name in done.new_models[:20]:
        print(f"  new: {name}")
    if len(done.new_models) > 20:
        print(f"  ... and {len(done.new_models) - 20} more")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from visiongate.engine.facts._catalog_store import current_catalog
    from visiongate.engine.tooling._catalog_show import render_show, show_document

    document = show_document(current_catalog(), args.provider, args.model)
    if args.json:
        print_json({"schema_version": SCHEMA_VERSION, **document})
    else:
        print(render_show(document))
    known = document.get("known", True) and document.get("model", {}).get("verdict") != "unknown"
    return EXIT_OK if known else EXIT_FINDINGS
