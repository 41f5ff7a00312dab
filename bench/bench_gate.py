"""Gate speed, measured against baselines in the same process.

    python bench/bench_gate.py [--quick]

Prints:
- `decide_facts` against a hand-written if/else function of the default policy that returns
  the same decision (lane, winning rule, reason, decision id, timestamp, policy); the goal is
  a ratio within 1.5x. Also, for transparency, against a bare if/else that returns only
  (lane, rule, reason) and carries no id, timestamp or policy reference;
- `decide(provider, model)` including fact resolution (goal: median under 10 µs), for a
  resolver cache hit and for a model never seen before;
- load + validate + compile of a policy (goal: under 50 ms), with fresh content each time so
  no cache helps.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from visiongate.engine import CellVerdict, Decision, Gate, all_cells
from visiongate.engine._decision import DecisionContext
from visiongate.engine._load import bundled_policy_text, compile_policy_text

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
    """The same if/else, producing the same decision object the gate returns."""
    context = DecisionContext(gate.policy_ref)
    # Verdicts built once, as a careful hand-coder would: only the branching differs.
    verdicts = {
        rule: CellVerdict(lane, rule, reason, (rule,))
        for lane, rule, reason in (hand_written(*cell) for cell in all_cells())
    }

    def decide(mode: str, catalog: str, aux: str, path: str) -> Decision:
        _lane, rule, _reason = hand_written(mode, catalog, aux, path)
        return Decision(verdicts[rule], (mode, catalog, aux, path), context)

    return decide


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


def bench_decide(loops: int, repeats: int) -> None:
    gate = Gate.load(routes=False)
    cells = [("auto", "vision", "unset", "accepts"), ("text", "unknown", "set", "refuses")]

    def ours() -> object:
        return [gate.decide_facts(*cell) for cell in cells]

    decide_by_hand = hand_written_decision(gate)

    def baseline() -> object:
        return [decide_by_hand(*cell) for cell in cells]

    def bare() -> object:
        return [hand_written(*cell) for cell in cells]

    ours_ns = per_call_ns(ours, loops, repeats) / len(cells)
    base_ns = per_call_ns(baseline, loops, repeats) / len(cells)
    bare_ns = per_call_ns(bare, loops, repeats) / len(cells)
    print(f"decide_facts                   {ours_ns:8.0f} ns/decision")
    print(f"hand-written if/else, decision {base_ns:8.0f} ns/decision")
    print(f"  ratio                        {ours_ns / base_ns:8.2f}x   (goal <= 1.50x)")
    print(f"bare if/else, lane triple      {bare_ns:8.0f} ns/decision")
    print(
        f"  ratio                        {ours_ns / bare_ns:8.2f}x   (no id, timestamp or policy)"
    )

    hit_ns = per_call_ns(lambda: gate.decide("anthropic", "claude-sonnet-4-5"), loops, repeats)
    print(f"decide(provider,model)         {hit_ns / 1000:8.2f} µs  (goal < 10 µs; memo hit)")
    counter = iter(range(10**9))

    def miss() -> object:
        return gate.decide("openrouter", f"proxy/alias-{next(counter)}")

    # A warm catalog: its look-up indexes, the did-you-mean index included (built on the
    # first unknown model), exist before the measured never-seen pairs.
    for _ in range(100):
        miss()

    miss_ns = per_call_ns(miss, max(loops // 10, 100), repeats)
    print(f"decide(provider,model)         {miss_ns / 1000:8.2f} µs  (a model never seen before)")
    print(f"  ratio to the memo hit        {miss_ns / hit_ns:8.1f}x")


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
    print(f"python {sys.version.split()[0]}; loops {loops} x repeats {repeats}")
    bench_decide(loops, repeats)
    bench_load(10 if args.quick else 40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
