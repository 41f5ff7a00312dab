"""Gate speed, measured against baselines in the same process.

    python bench/bench_gate.py [--quick]

Prints:
- `decide_facts` against a hand-written if/else function of the default policy that builds
  the same `Decision` value (lane, winning rule, reason, matched rules, facts, provenance,
  warnings, policy reference and the policy that carries the lane out, a decision id and a
  timestamp; checked equal before timing); the goal is a ratio of at most 1.0x (issue 37).
  Also, for transparency, against a bare if/else that returns only (lane, rule, reason) and
  carries no id, timestamp or policy reference;
- `decide(provider, model)` including fact resolution (goal: at most 10 µs for a pair never
  seen before, issue 24), for a resolver cache hit and for never-seen pairs of several kinds
  (a gateway alias, an unknown provider, a vendor's new model, a vendor-prefixed `:free`
  variant, a model a message rule covers), each also as a ratio to two baselines timed in
  the same run: the memo hit, and a plain dict look-up plus the `Decision` it returns;
- load + validate + compile of a policy (goal: under 50 ms), with fresh content each time so
  no cache helps.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from visiongate.engine import CellVerdict, Decision, Gate, all_cells
from visiongate.engine._decision import DecisionContext
from visiongate.engine._load import bundled_policy_text, compile_policy_text
from visiongate.engine.facts._resolver import MEMO_SIZE

REASONS = {
    "text-mode": "image_input_mode is text",
    "route-refuses-images": "route refuses",
    "native-mode": "native mode",
    "auto-vision-model": "vision model",
    "auto-vision-model-unverified-route": "vision model, unverified route",
    "auto-aux-configured": "aux configured",
    "auto-model-not-known-to-see": "not known to see",
}


def hand_written(mode: str, catalog: str, aux: str, path: str) -> tuple[str, str, str]:
    """The default policy as an agent would hard-code it (with validation, as the gate does)."""
    if mode not in ("auto", "native", "text") or catalog not in ("vision", "no_vision", "unknown"):
        raise ValueError("bad fact")
    if aux not in ("set", "unset") or path not in ("accepts", "refuses", "unverified"):
        raise ValueError("bad fact")
    if mode == "text":
        rule, lane = "text-mode", "text"
    elif path == "refuses":
        rule, lane = "route-refuses-images", "text"
    elif mode == "native":
        rule, lane = "native-mode", "native"
    elif aux == "set":
        rule, lane = "auto-aux-configured", "text"
    elif catalog == "vision":
        rule = "auto-vision-model" if path == "accepts" else "auto-vision-model-unverified-route"
        lane = "native"
    else:
        rule, lane = "auto-model-not-known-to-see", "text"
    return lane, rule, REASONS[rule]


def hand_written_decision(gate: Gate) -> Callable[[str, str, str, str], Decision]:
    """The same if/else, producing the same decision value the gate returns."""
    policy = gate.compiled.policy
    warnings = tuple(finding.warning_text() for finding in policy.warnings)
    context = DecisionContext(gate.policy_ref, warnings=warnings, full_policy=policy)
    # Verdicts built once, as a careful hand-coder would: only the branching differs. The
    # default policy's texts are the gate's (`same_decisions` checks every cell).
    reasons = {rule.id: rule.reason for rule in policy.rules}
    verdicts = {
        rule: CellVerdict(lane, rule, reasons[rule], (rule,))
        for lane, rule, _reason in (hand_written(*cell) for cell in all_cells())
    }

    def decide(mode: str, catalog: str, aux: str, path: str) -> Decision:
        _lane, rule, _reason = hand_written(mode, catalog, aux, path)
        return Decision(verdicts[rule], (mode, catalog, aux, path), context)

    return decide


def same_decisions(gate: Gate, by_hand: Callable[[str, str, str, str], Decision]) -> None:
    """Every cell decided both ways gives the same value (its id and timestamp aside, which
    are each decision's own), and the same policy to carry the lane out."""
    for cell in all_cells():
        ours, theirs = gate.decide_facts(*cell, at=0.0), by_hand(*cell)
        theirs.timestamp = 0.0
        mine, other = ours.record(), theirs.record()
        del mine["decision_id"], other["decision_id"]
        assert mine == other, (cell, mine, other)
        assert ours.full_policy is theirs.full_policy and ours.warnings == theirs.warnings


def per_call_ns(function: Callable[[], object], loops: int, repeats: int) -> float:
    """Median over `repeats` of the mean CPU time per call in a loop of `loops` calls: CPU
    time (`process_time`), not wall time, because the machine is shared and wall time counts
    the moments another process holds the core."""
    samples = []
    for _ in range(repeats):
        start = time.process_time_ns()
        for _ in range(loops):
            function()
        samples.append((time.process_time_ns() - start) / loops)
    return statistics.median(samples)


def interleaved_ns(
    functions: Sequence[Callable[[], object]], loops: int, repeats: int
) -> list[float]:
    """`per_call_ns` of each function, their repeats taken in turn (one loop of each, then
    again), so that a burst of load on the shared machine hits every function alike."""
    samples: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for function, found in zip(functions, samples, strict=True):
            found.append(per_call_ns(function, loops, 1))
    return [statistics.median(found) for found in samples]


CELLS = [("auto", "vision", "unset", "accepts"), ("text", "unknown", "set", "refuses")]
NAMED = [dict(zip(("mode", "catalog", "aux", "path"), cell, strict=True)) for cell in CELLS]


def call_forms(
    gate: Gate, by_hand: Callable[..., Decision]
) -> dict[str, list[Callable[[], object]]]:
    """For each way a caller passes the four facts, the gate's loop body and the hand-written
    one's, each deciding every cell once: positional as in the API's docstrings, keywords as
    in the README, and unpacked from a tuple. The gate's method is looked up at each call, as
    a caller holding the gate does."""

    def ours_positional() -> object:
        return [gate.decide_facts(m, c, a, p) for m, c, a, p in CELLS]

    def theirs_positional() -> object:
        return [by_hand(m, c, a, p) for m, c, a, p in CELLS]

    def ours_keywords() -> object:
        return [
            gate.decide_facts(mode=f["mode"], catalog=f["catalog"], aux=f["aux"], path=f["path"])
            for f in NAMED
        ]

    def theirs_keywords() -> object:
        return [
            by_hand(mode=f["mode"], catalog=f["catalog"], aux=f["aux"], path=f["path"])
            for f in NAMED
        ]

    def ours_unpacked() -> object:
        return [gate.decide_facts(*cell) for cell in CELLS]

    def theirs_unpacked() -> object:
        return [by_hand(*cell) for cell in CELLS]

    return {
        "positional": [ours_positional, theirs_positional],
        "keywords": [ours_keywords, theirs_keywords],
        "unpacked": [ours_unpacked, theirs_unpacked],
    }


def bench_decide(loops: int, repeats: int) -> None:
    gate = Gate.load(routes=False)
    decide_by_hand = hand_written_decision(gate)
    same_decisions(gate, decide_by_hand)
    forms = call_forms(gate, decide_by_hand)

    def bare() -> object:
        return [hand_written(*cell) for cell in CELLS]

    # All seven loops interleaved, so a burst of load hits every form alike.
    bodies = [body for pair in forms.values() for body in pair] + [bare]
    timed = [ns / len(CELLS) for ns in interleaved_ns(bodies, loops, repeats)]
    print("decide_facts vs the hand-written if/else building the same decision (goal <= 1.00x,")
    print("issue 37), by how the facts are passed:")
    for index, form in enumerate(forms):
        ours_ns, base_ns = timed[2 * index], timed[2 * index + 1]
        print(
            f"  {form:<11} decide_facts {ours_ns:6.0f} ns, hand-written {base_ns:6.0f} ns"
            f"  {ours_ns / base_ns:6.2f}x"
        )
    bare_ns = timed[-1]
    print(f"bare if/else, lane triple      {bare_ns:8.0f} ns/decision")
    print(
        f"  ratio (positional)           {timed[0] / bare_ns:8.2f}x   (no id, timestamp or policy)"
    )

    bench_never_seen(gate, loops, repeats)


NEVER_SEEN: dict[str, tuple[str, str]] = {
    "a gateway alias": ("openrouter", "proxy/alias-{}"),
    "an unknown provider": ("my-gateway", "model-{}"),
    "a vendor's new model": ("anthropic", "claude-sonnet-9-{}"),
    "vendor-prefixed :free variant": ("openrouter", "google/gemma-{}:free"),
    "a bare id gateways also list": ("xai", "grok-{}"),
    "a message rule's model": ("mistral", "mistral-large-{}"),
}
"""Never-seen pairs by kind: (provider, model template); each call fills in a new number."""


def bench_never_seen(gate: Gate, loops: int, repeats: int) -> None:
    hit_ns = per_call_ns(lambda: gate.decide("anthropic", "claude-sonnet-4-5"), loops, repeats)
    known = gate.decide("anthropic", "claude-sonnet-4-5")
    verdict = CellVerdict(known.lane, known.rule, known.reason, known.matched)
    table = {("anthropic", "claude-sonnet-4-5"): (verdict, known.cell)}
    context = DecisionContext(gate.policy_ref)

    def plain() -> Decision:
        verdict, cell = table[("anthropic", "claude-sonnet-4-5")]
        return Decision(verdict, cell, context)

    plain_ns = per_call_ns(plain, loops, repeats)
    print(f"decide(provider,model)         {hit_ns / 1000:8.2f} µs  (memo hit)")
    print(f"dict look-up + Decision        {plain_ns / 1000:8.2f} µs  (baseline)")
    print("never-seen pair (warm catalog)       µs   / hit  / baseline  (goal <= 10 µs)")
    counter = iter(range(10**9))
    for kind, (provider, template) in NEVER_SEEN.items():

        def miss(provider: str = provider, template: str = template) -> object:
            return gate.decide(provider, template.format(next(counter)))

        # A warm catalog: its look-up indexes, the did-you-mean index included (built on the
        # first unknown model), exist before the measured pairs, and the memo is full, so
        # every measured pair also evicts one, as in a long-running process.
        for _ in range(MEMO_SIZE):
            miss()
        miss_ns = per_call_ns(miss, max(loops // 10, 100), repeats)
        ratios = f"{miss_ns / hit_ns:6.1f}x {miss_ns / plain_ns:6.1f}x"
        print(f"  {kind:<30} {miss_ns / 1000:8.2f} {ratios}")


def bench_load(repeats: int) -> None:
    text = bundled_policy_text("default")
    load_ms = []
    for index in range(repeats):
        fresh = f"{text}\n# run {time.time_ns()} {index}\n"  # new content: no cache applies
        start = time.perf_counter()
        compile_policy_text(fresh, "bench.yaml")
        load_ms.append((time.perf_counter() - start) * 1000)
    print(
        f"load+validate+compile   {statistics.median(load_ms):8.2f} ms median over {repeats} "
        f"(goal < 50 ms), max {max(load_ms):.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    loops, repeats = (2_000, 5) if args.quick else (20_000, 15)
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"python {sys.version.split()[0]}; loops {loops} x repeats {repeats}; load average {load}"
    )
    bench_decide(loops, repeats)
    bench_load(10 if args.quick else 40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
