"""`visiongate decide`: one decision, from a provider and model or from the facts."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from visiongate.cli import EXIT_INVALID_POLICY, EXIT_OK
from visiongate.cli._common import (
    UsageError,
    add_gate_arguments,
    check_gate_inputs,
    checked,
    print_json,
    target_model,
)

if TYPE_CHECKING:
    from visiongate.engine import Decision, Gate, PolicyRef


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--provider", help="provider id, e.g. `anthropic`, `openrouter`")
    parser.add_argument("--model", help="model id, e.g. `claude-sonnet-4-5`")
    parser.add_argument(
        "--facts",
        nargs="+",
        metavar="FACT=VALUE",
        help="the four facts given directly, as in test files: "
        "`mode=auto catalog=vision aux=unset path=accepts` (or comma separated)",
    )
    add_gate_arguments(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the decision record as one JSON document"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also show every rule and why it matched or not (inside the JSON with --json)",
    )


def _check_usage(args: argparse.Namespace) -> None:
    if args.facts and (args.provider or args.model):
        raise UsageError("give either --provider and --model, or --facts, not both")
    if not args.facts and not (args.provider and args.model) and not args.config:
        given = "--provider" if args.provider else "--model" if args.model else None
        if given:
            raise UsageError("--provider and --model go together")
        raise UsageError("give --provider and --model, or --facts (or --config with a main model)")


def run(args: argparse.Namespace) -> int:
    _check_usage(args)
    check_gate_inputs(args)
    gate, decision = checked(lambda: _decide(args))
    if args.json:
        print_json(decision_document(gate, decision, args.explain))
    else:
        print(render_decision(decision))
        if args.explain:
            from visiongate.engine.tooling._explain import explain_cell

            print()
            print(explain_cell(gate.compiled, decision.cell))
    from visiongate.kernel._display import visible

    # A typo or a clamp is said where a person looks; a config error once, in its located
    # form with its code (below), not also as the record's one-line copy.
    # `gate.config`: the resolver's own config, without building the resolver.
    errors = {error.warning_text() for error in gate.config.errors}
    for warning in decision.warnings:
        if warning not in errors:
            print(f"visiongate decide: {visible(_warning(warning))}", file=sys.stderr)
    return _config_errors(gate)


def decision_document(gate: Gate, decision: Decision, explain: bool) -> dict[str, Any]:
    """The decision record; `provider` and `model` are always there (null for given facts),
    and with `explain` the rules' verdicts for the cell are in `explanation`."""
    record = decision.record()
    record.setdefault("provider", None)
    record.setdefault("model", None)
    if explain:
        from visiongate.engine.tooling._explain import cell_explanation

        record["explanation"] = cell_explanation(gate.compiled, decision.cell)
    return record


def _config_errors(gate: Gate) -> int:
    """Exit 3 when the agent config holds a mistake the gate failed closed on."""
    errors = gate.config.errors
    for error in errors:
        print(f"visiongate decide: {error.render()}", file=sys.stderr)
    return EXIT_INVALID_POLICY if errors else EXIT_OK


def _decide(args: argparse.Namespace) -> tuple[Gate, Decision]:
    if args.facts:
        from visiongate.engine.tooling._decide import facts_gate, parse_cell

        try:
            cell = parse_cell(" ".join(args.facts))
        except ValueError as error:
            raise UsageError(str(error)) from None
        gate = facts_gate(args.policy, args.config, args.catalog, args.registry)
        return gate, gate.decide_facts(*cell)
    from visiongate.engine import Gate

    gate = Gate.load(args.policy, args.config, args.catalog, args.registry)
    return gate, gate.decide(*target_model(args, gate))


def render_decision(decision: Decision) -> str:
    """A short human-readable form of a decision."""
    from visiongate.kernel._display import visible

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
        f"policy:  {policy.name} {policy.version} (sha256 {policy.sha256[:12]}, {_where(policy)})"
    )
    return "\n".join(visible(line) for line in lines)


def _warning(text: str) -> str:
    return text if text.startswith("error: ") else f"warning: {text}"


def _where(policy: PolicyRef) -> str:
    """`bundled default, visiongate 0.1.0` or the policy file's path."""
    if policy.bundled is not None:
        return f"bundled {policy.bundled}, visiongate {policy.package_version}"
    return policy.path or "given as text"
