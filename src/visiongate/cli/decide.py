"""`visiongate decide`: one decision, from a provider and model or from the facts."""

from __future__ import annotations

import argparse
import json
import sys

from visiongate.cli import EXIT_INVALID_POLICY, EXIT_OK, EXIT_USAGE
from visiongate.cli._common import add_gate_arguments, guarded
from visiongate.engine import Decision, Gate
from visiongate.engine._vocabulary import FACT_NAMES
from visiongate.engine.tooling._explain import explain_cell

HELP = "decide the lane for a provider and model (or for facts given directly)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="provider id, e.g. `anthropic`, `openrouter`")
    parser.add_argument("--model", help="model id, e.g. `claude-sonnet-4-5`")
    parser.add_argument(
        "--facts", help="facts given directly: `mode=auto,catalog=vision,aux=unset,path=accepts`"
    )
    add_gate_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the decision record as JSON")
    parser.add_argument(
        "--explain", action="store_true", help="also show every rule and why it matched or not"
    )


def parse_facts(text: str) -> dict[str, str]:
    """`mode=auto,catalog=vision,...` into a mapping; every fact must be given exactly once."""
    facts: dict[str, str] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, separator, value = part.partition("=")
        if not separator or name.strip() not in FACT_NAMES:
            raise ValueError(
                f"`{part}` is not `fact=value` with a fact among {', '.join(FACT_NAMES)}"
            )
        facts[name.strip()] = value.strip()
    missing = [name for name in FACT_NAMES if name not in facts]
    if missing:
        raise ValueError(f"missing fact(s): {', '.join(missing)}")
    return facts


def run(args: argparse.Namespace) -> int:
    if bool(args.facts) == bool(args.provider or args.model):
        print("visiongate decide: give either --provider and --model, or --facts")
        return EXIT_USAGE
    if not args.facts and not (args.provider and args.model):
        print("visiongate decide: --provider and --model go together")
        return EXIT_USAGE
    result = guarded(lambda: _decide(args))
    if isinstance(result, int):
        return result
    gate, decision = result
    if args.json:
        print(json.dumps(decision.record(), indent=2, ensure_ascii=False))
    else:
        print(render_decision(decision))
    if args.explain:
        print()
        print(explain_cell(gate.compiled, decision.cell))
    return _config_errors(gate)


def _config_errors(gate: Gate) -> int:
    """Exit 3 when the agent config holds a mistake the gate failed closed on."""
    errors = gate.resolver.config.errors
    for error in errors:
        print(f"visiongate decide: {error.render()}", file=sys.stderr)
    return EXIT_INVALID_POLICY if errors else EXIT_OK


def _decide(args: argparse.Namespace) -> tuple[Gate, Decision]:
    gate = Gate.load(args.policy, args.config, args.catalog, args.registry)
    if args.facts:
        facts = parse_facts(args.facts)
        cell = (facts["mode"], facts["catalog"], facts["aux"], facts["path"])
        return gate, gate.decide_facts(*cell)
    return gate, gate.decide(args.provider, args.model)


def render_decision(decision: Decision) -> str:
    """A short human-readable form of a decision."""
    policy = decision.policy
    lines = [
        f"lane:    {decision.lane}",
        f"rule:    {decision.rule or '(default: no rule matched)'}",
        f"reason:  {decision.reason}",
        "facts:",
    ]
    for name, value in decision.facts.items():
        lines.append(f"  {name:<8} {value:<10} {decision.provenance.get(name, '')}")
    if len(decision.matched) > 1:
        lines.append(f"matched: {', '.join(decision.matched)}")
    lines.append(
        f"policy:  {policy.name} {policy.version} (sha256 {policy.sha256[:12]}, {policy.path})"
    )
    lines += [w if w.startswith("error: ") else f"warning: {w}" for w in decision.warnings]
    return "\n".join(lines)
