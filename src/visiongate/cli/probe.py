"""`visiongate probe`: settle a route by experiment, optionally saving the verdict."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from visiongate.cli import EXIT_FINDINGS, EXIT_OK
from visiongate.cli._common import UsageError, check_gate_inputs, checked, print_json
from visiongate.kernel.shapes import PROBE_APIS  # the shapes' own list; imports nothing heavy

if TYPE_CHECKING:
    from visiongate.adapters.probe import ProbeResult
    from visiongate.engine import Gate

SCHEMA_VERSION = 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", required=True, help="provider id, e.g. `openrouter`")
    parser.add_argument(
        "--model", required=True, help="model id, e.g. `anthropic/claude-sonnet-4.5`"
    )
    parser.add_argument(
        "--api", choices=PROBE_APIS, help="API shape to speak (default: the route's own)"
    )
    parser.add_argument("--base-url", help="the endpoint's base URL (default: the provider's)")
    parser.add_argument(
        "--key-env",
        metavar="VAR",
        help="environment variable holding the API key (default: the provider's usual one); "
        "no key found stops the probe before any request",
    )
    parser.add_argument(
        "--no-key", action="store_true", help="send no key (an endpoint that takes none)"
    )
    parser.add_argument(
        "--save",
        action="store_true",
        help="record `accepts` or `refuses` in the routes file (evidence `probed <date>`)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait (60)")
    parser.add_argument("--config", help="agent config YAML")
    parser.add_argument("--registry", help="provider registry YAML (default: bundled)")
    parser.add_argument("--routes", help="routes file (default: the config's, else state dir)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    from visiongate.adapters.probe import plan_probe, probe_route
    from visiongate.engine import Gate

    if args.no_key and args.key_env:
        raise UsageError("give `--key-env` or `--no-key`, not both")
    check_gate_inputs(args)
    gate = checked(
        lambda: Gate.load(config=args.config, registry=args.registry, routes=args.routes)
    )
    try:
        target = plan_probe(
            gate,
            args.provider,
            args.model,
            api=args.api,
            base_url=args.base_url,
            key_env=args.key_env,
            keyless=args.no_key,
            timeout=args.timeout,
        )
        result = probe_route(target)
    except ValueError as error:
        raise UsageError(str(error)) from None
    saved = _save(gate, target.route.provider, args.model, result) if args.save else None
    _print(args, target.route.provider, result, saved)
    return EXIT_FINDINGS if result.verdict == "inconclusive" else EXIT_OK


def _save(gate: Gate, provider: str, model: str, result: ProbeResult) -> str:
    from visiongate.engine.facts._routes import LearnedRoute

    if result.verdict == "inconclusive":
        return "not saved: an inconclusive probe settles nothing"
    learned = LearnedRoute.today(provider, model, result.verdict, "probed", result.detail)
    gate.resolver.learn(learned)
    return f"saved to {gate.resolver.routes.path}: {learned.provenance}"


def _print(args: argparse.Namespace, provider: str, result: ProbeResult, saved: str | None) -> None:
    if args.json:
        document = {**result.as_dict(), "provider": provider, "model": args.model, "saved": saved}
        print_json({"schema_version": SCHEMA_VERSION, **document})
        return
    width, height = result.image_size
    print(f"probe:   {provider} / {args.model.strip()} over {result.api} at {result.origin}")
    print(f"code:    {result.code} (a {width}x{height} image inside the tool result)")
    print(f"verdict: {result.verdict}: {result.detail}")
    if saved:
        print(saved)
