"""`visiongate catalog update|show`: refresh the model catalog, or see what it knows.

`update` fetches models.dev's `api.json` (or `--url`, or `$VISIONGATE_CATALOG_URL`), checks
its shape and stores it in the user cache, saying per model what changed (gained, lost,
vision -> text, text -> vision); a failed, slow, oversized or misshapen fetch, or one that
drops most of the catalog in use (unless `--accept-shrink`), keeps the catalog in use, says
why in one line and exits 2. `show PROVIDER [MODEL]` prints what the catalog in use says,
and which catalog that is (bundled or refreshed, and its date). Ids come from a server: both
print them with `visible`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_OK, EXIT_USAGE
from visiongate.cli._common import UsageError, print_json

if TYPE_CHECKING:
    from visiongate.engine.facts._catalog_changes import Change

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
        "--config",
        help="agent config whose `models_dev.url` names the catalog URL (after --url and "
        "$VISIONGATE_CATALOG_URL)",
    )
    update.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="deadline of the fetch"
    )
    update.add_argument(
        "--accept-shrink",
        action="store_true",
        help="store a catalog that drops most of the providers or models in use",
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
        URL_ENV,
        CatalogUpdateError,
        current_catalog,
        update_catalog,
    )
    from visiongate.kernel._display import visible

    url = args.url or os.environ.get(URL_ENV) or _config_url(args.config)
    try:
        done = update_catalog(url, deadline=args.timeout, accept_shrink=args.accept_shrink)
    except CatalogUpdateError as error:
        # `current_catalog` never raises: an unusable refreshed copy falls back to the bundled one.
        label = current_catalog().label
        print(f"visiongate catalog: {visible(str(error))}; still using {label}", file=sys.stderr)
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
                "changes": [
                    {
                        "model": change.model,
                        "change": change.change,
                        "before": _inputs(change.before),
                        "after": _inputs(change.after),
                    }
                    for change in done.changes
                ],
            }
        )
        return EXIT_OK
    counts = dict.fromkeys(_KINDS, 0)
    for change in done.changes:
        counts[change.change] += 1
    said = ", ".join(f"{counts[kind]} {word}" for kind, word in _KINDS.items())
    print(
        visible(
            f"catalog updated from {done.url} at {done.date}: {done.models} models of "
            f"{done.providers} providers, {said}; stored in {done.path}"
        )
    )
    for kind, word in _KINDS.items():
        listed = [change for change in done.changes if change.change == kind]
        for change in listed[:20]:
            print(visible(f"  {word}: {change.model}{_detail(change)}"))
        if len(listed) > 20:
            print(f"  ... and {len(listed) - 20} more {word}")
    return EXIT_OK


def _config_url(config: str | None) -> str | None:
    """`models_dev.url` of the agent config given with `--config`, if any."""
    if config is None:
        return None
    from visiongate.cli._common import checked
    from visiongate.engine.facts.config._config import AgentConfig

    return checked(lambda: AgentConfig.from_file(config)).catalog_url


_KINDS = {
    "vision -> text": "vision -> text",
    "text -> vision": "text -> vision",
    "gained": "new",
    "lost": "gone",
}
"""Each kind of change, in the order printed (those that move a lane first), with its word."""


def _inputs(inputs: tuple[str, ...] | None) -> list[str] | None:
    return None if inputs is None else list(inputs)


def _detail(change: Change) -> str:
    if change.before is None or change.after is None:
        return ""
    return f" (input [{', '.join(change.before)}] -> [{', '.join(change.after)}])"


def _show(args: argparse.Namespace) -> int:
    from visiongate.engine.facts._catalog_store import current_catalog
    from visiongate.engine.tooling._catalog_show import missing_line, render_show, show_document

    catalog = current_catalog()
    document = show_document(catalog, args.provider, args.model)
    known = document.get("known", True) and document.get("model", {}).get("verdict") != "unknown"
    if args.json:
        print_json({"schema_version": SCHEMA_VERSION, **document})
    elif known:
        print(render_show(document))
    if not known:  # a failed look-up: one line, with the near name when there is one
        raise UsageError(missing_line(catalog, document))
    return EXIT_OK
