"""Compiling stays bounded in memory and within durable-rules' limits (issue 13).

durable-rules never frees what its rulesets allocate (2,000 distinct compiles once added
1,115 MB to the process), so the engine runs in a worker process that is replaced when its
memory passes a budget. These tests compile hundreds of distinct policies and bound both
the caller's growth and the worker's peak.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from visiongate.engine import load_policy
from visiongate.engine._compile import (
    GROUP_SIZE,
    CompileError,
    EngineWorker,
    condition_key,
    durable_condition,
    match_cells,
)
from visiongate.engine._policy import Policy, Rule, condition_matches
from visiongate.engine._vocabulary import FACTS, all_cells

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/statm").exists(), reason="reads RSS from /proc"
)


def rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / (1024 * 1024)


def random_policy(base: Policy, rng: random.Random, serial: int) -> Policy:
    rules = []
    for index in range(rng.randint(4, 40)):
        when = {
            fact: frozenset(rng.sample(values, rng.randint(1, len(values))))
            for fact, values in FACTS.items()
            if rng.random() < 0.6
        }
        rules.append(Rule(f"r{index}", when, "text", "r", index, base.rules[0].location))
    return replace(base, rules=tuple(rules), sha256=f"memory-test-{serial:058d}")


def expected(policy: Policy) -> dict[tuple[str, ...], tuple[int, ...]]:
    return {
        cell: tuple(rule.index for rule in policy.rules if condition_matches(rule.when, cell))
        for cell in all_cells()
    }


@pytest.mark.slow  # 500 compiles
def test_500_distinct_compiles_keep_memory_bounded() -> None:
    base = load_policy().policy
    worker = EngineWorker(max_rss_mb=80)
    rng = random.Random(500)
    try:
        match_cells(random_policy(base, rng, 0), worker)  # the first compile starts a worker
        before = rss_mb()
        for serial in range(1, 501):
            policy = random_policy(base, rng, serial)
            matches = match_cells(policy, worker)
            if serial % 100 == 0:
                assert dict(matches) == expected(policy)
        growth = rss_mb() - before
    finally:
        worker.close()
    # Each of these compiles once kept ~0.5 MB in this process; now none stays here.
    assert growth < 25, f"the caller grew by {growth:.1f} MB over 500 compiles"
    assert worker.started >= 2, "the worker was replaced when it passed its budget"
    assert worker.peak_rss_mb < 80 + 32, f"a worker peaked at {worker.peak_rss_mb:.0f} MB"


def test_every_distinct_condition_compiles_in_bounded_groups() -> None:
    # The largest condition set the vocabulary allows, in groups of GROUP_SIZE: no engine
    # limit (error 303 on the traversal stack, error 107 on a node's list) is reached.
    choices = [
        [None, *(frozenset(c) for k in range(1, len(v)) for c in itertools.combinations(v, k))]
        for v in FACTS.values()
    ]
    base = load_policy().policy
    rules = []
    for index, combination in enumerate(itertools.product(*choices)):
        when = {fact: values for fact, values in zip(FACTS, combination, strict=True) if values}
        rules.append(Rule(f"c{index}", when, "text", "r", index, base.rules[0].location))
    policy = replace(base, rules=tuple(rules), sha256="every-condition".ljust(64, "0"))
    assert len({condition_key(rule.when) for rule in rules}) > 9 * GROUP_SIZE
    worker = EngineWorker()
    try:
        assert dict(match_cells(policy, worker)) == expected(policy)
    finally:
        worker.close()


def test_conditions_are_conjunctions_of_exclusions() -> None:
    # No `$or`: every disjunction branch takes a slot of a shared 128-entry list (error 107).
    key = condition_key({"mode": frozenset({"auto", "native"}), "aux": frozenset({"set"})})
    assert "$or" not in str(durable_condition(key))
    assert durable_condition(key)["$and"][1:] == [
        {"$neq": {"mode": "text"}},
        {"$neq": {"aux": "unset"}},
    ]


def test_without_a_python_executable_compilation_runs_in_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    policy = replace(load_policy().policy, sha256="in-process".ljust(64, "0"))
    monkeypatch.setattr(sys, "executable", "")
    worker = EngineWorker()
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        assert dict(match_cells(policy, worker)) == expected(policy)
    assert "compiling in process" in caplog.text
    assert worker.started == 0


def test_a_killed_worker_is_replaced_on_the_next_compile() -> None:
    base = load_policy().policy
    worker = EngineWorker()
    try:
        match_cells(replace(base, sha256="killed-1".ljust(64, "0")), worker)
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGKILL)
        policy = replace(base, sha256="killed-2".ljust(64, "0"))
        assert dict(match_cells(policy, worker)) == expected(policy)
        assert worker.started == 2
    finally:
        worker.close()


def test_a_worker_that_cannot_answer_fails_the_compile_clearly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An interpreter whose `sys.executable` is not Python (an embedding server) starts a
    # process that exits at once: the compile fails with CompileError, not in this process.
    monkeypatch.setattr(sys, "executable", "/bin/false")
    worker = EngineWorker()
    policy = replace(load_policy().policy, sha256="no-python".ljust(64, "0"))
    with pytest.raises(CompileError, match="died twice"):
        match_cells(policy, worker)
    assert worker.started == 2
