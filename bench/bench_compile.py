"""Policy size and hostile input: compile, lint and memory, against baselines in the same run.

    python bench/bench_compile.py [--quick]

Prints:
- load + validate + compile of a 1,000-rule policy (fresh content each time, so no cache
  helps), next to the default policy's 6 rules; and the compile step alone (durable-rules,
  in bounded groups, in its worker process) next to a pure-Python matcher over the same rules;
- `visiongate lint` of a 5 MB policy (the default policy padded with comments; goal: under
  2 s), next to PyYAML's pure-Python loader reading the same text (what the loader did before)
  and the unpadded policy; and of a policy of 1,000 rules with 4 KB reasons (about 5 MB);
- RSS growth of this process over 300 distinct compiles: with the engine in its worker (as
  shipped) and with durable-rules run in this process (as before).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import yaml

from visiongate.engine import load_policy
from visiongate.engine._compile import compile_request, condition_key, match_cells
from visiongate.engine._compile_worker import evaluate
from visiongate.engine._load import bundled_policy_text, compile_policy_text
from visiongate.engine._policy import Policy, Rule, condition_matches
from visiongate.engine._vocabulary import FACTS, all_cells
from visiongate.engine.tooling.lint._check import lint_text

DEFAULT = bundled_policy_text("default")


def median_seconds(function: Callable[[int], object], repeats: int) -> float:
    timings = []
    for index in range(repeats):
        start = time.perf_counter()
        function(index)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def random_when(rng: random.Random) -> str:
    parts = [
        f"{fact}: [{', '.join(rng.sample(values, rng.randint(1, len(values))))}]"
        for fact, values in FACTS.items()
        if rng.random() < 0.6
    ]
    return "{" + ", ".join(parts) + "}"


def many_rules(count: int, seed: int, reason_chars: int = 20) -> str:
    rng = random.Random(seed)
    rules = "".join(
        f"  - id: r{index}\n    when: {random_when(rng)}\n"
        f"    lane: {rng.choice(['text', 'native'])}\n"
        f"    reason: rule {index} {'x' * reason_chars}\n"
        for index in range(count)
    )
    head = "policy: many\nversion: '1'\ndescription: many rules\nhit_policy: first\n"
    return f"{head}default: text\nrules:\n{rules}"


def python_matches(policy: Policy) -> dict[tuple[str, ...], tuple[int, ...]]:
    return {
        cell: tuple(rule.index for rule in policy.rules if condition_matches(rule.when, cell))
        for cell in all_cells()
    }


def bench_compile(repeats: int) -> None:
    small = median_seconds(lambda i: compile_policy_text(DEFAULT + f"\n# {i}\n"), repeats)
    texts = [many_rules(1_000, seed) for seed in range(repeats)]
    large = median_seconds(lambda i: compile_policy_text(texts[i], "bench.yaml"), repeats)
    print(f"load+validate+compile, default (6 rules)   {small * 1000:9.1f} ms median")
    print(f"load+validate+compile, 1,000 rules         {large * 1000:9.1f} ms median")
    print(f"  ratio                                    {large / small:9.1f}x")
    policy = compile_policy_text(texts[0], "bench.yaml").policy
    fresh = [replace(policy, sha256=f"bench-{i}".ljust(64, "0")) for i in range(repeats)]
    engine = median_seconds(lambda i: match_cells(fresh[i]), repeats)
    plain = median_seconds(lambda i: python_matches(policy), repeats)
    distinct = len({condition_key(rule.when) for rule in policy.rules})
    print(f"compile step, 1,000 rules ({distinct} distinct conditions), durable-rules worker")
    print(f"                                           {engine * 1000:9.1f} ms median")
    print(f"pure-Python matcher, same rules            {plain * 1000:9.1f} ms median")
    print(f"  ratio                                    {engine / plain:9.1f}x")


def bench_lint(repeats: int) -> None:
    padding = "# a comment line padding the policy out to megabytes of text\n"
    padded = padding * (5_000_000 // len(padding)) + DEFAULT
    megabytes = len(padded.encode()) / 1e6
    ours = median_seconds(lambda i: lint_text(padded + f"# {i}\n", "padded.yaml"), repeats)
    pure = median_seconds(lambda i: yaml.load(padded, Loader=yaml.SafeLoader), max(1, repeats // 3))
    plain = median_seconds(lambda i: lint_text(DEFAULT + f"# {i}\n", "default.yaml"), repeats)
    print(f"lint, {megabytes:.1f} MB comment-padded policy      {ours:9.3f} s median (goal <= 2 s)")
    print(f"PyYAML pure-Python load, same text         {pure:9.3f} s median")
    print(f"  ratio                                    {ours / pure:9.2f}x")
    print(f"lint, default policy ({len(DEFAULT):,} bytes)       {plain:9.3f} s median")
    dense = many_rules(1_000, 7, reason_chars=4_000)
    dense_megabytes = len(dense.encode()) / 1e6
    dense_time = median_seconds(lambda i: lint_text(dense + f"# {i}\n", "dense.yaml"), 3)
    print(f"lint, {dense_megabytes:.1f} MB of 1,000 rules, 4 KB reasons {dense_time:9.3f} s median")


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / (1024 * 1024)


def bench_memory(compiles: int) -> None:
    base = load_policy().policy
    rng = random.Random(1)

    def distinct(serial: int) -> Policy:
        rules = tuple(
            Rule(
                f"r{i}",
                {"mode": frozenset(rng.sample(FACTS["mode"], 2))},
                "text",
                "r",
                i,
                base.rules[0].location,
            )
            for i in range(rng.randint(4, 40))
        )
        return replace(base, rules=rules, sha256=f"memory-{serial}".ljust(64, "0"))

    match_cells(distinct(-1))
    before = rss_mb()
    for serial in range(compiles):
        match_cells(distinct(serial))
    worker = rss_mb() - before
    before = rss_mb()
    for serial in range(compiles):
        policy = distinct(serial)
        keys = list(dict.fromkeys(condition_key(rule.when) for rule in policy.rules))
        evaluate(compile_request(policy, keys))
    in_process = rss_mb() - before
    print(f"RSS growth, {compiles} distinct compiles, worker     {worker:9.1f} MB")
    print(f"RSS growth, same compiles, durable in process {in_process:9.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    quick = parser.parse_args().quick
    repeats = 3 if quick else 9
    print(f"python {sys.version.split()[0]}; repeats {repeats}")
    bench_compile(repeats)
    bench_lint(3 if quick else 5)
    if Path("/proc/self/statm").exists():
        bench_memory(100 if quick else 300)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
