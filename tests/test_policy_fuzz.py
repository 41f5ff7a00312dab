"""Hostile policy files (issue 13): the loader answers every one with located diagnostics.

A seeded mutation fuzzer (`_policy_mutations.py`) runs every class the reliability probe
found: engine limits, recursion and alias bombs, wrong-typed values and explicit tags,
sizes, and byte-level damage. For each case: no exception escapes the loader, every
diagnostic has `file:line:col` and a one-line message. A watchdog fails the run on a real
hang (a case still running after `DEADLINE` seconds), so no timing is asserted.

`VISIONGATE_FUZZ_SEED` and `VISIONGATE_FUZZ_CASES` change the run; a failure names the seed
and the case, which reproduce it exactly.
"""

from __future__ import annotations

import faulthandler
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from _policy_mutations import FAMILIES, mutate

from visiongate.engine import PolicyError, analyze_policy_text
from visiongate.engine._diagnostics import Diagnostic
from visiongate.engine._policy_schema import MAX_RULES
from visiongate.engine.facts.config._config import AgentConfig
from visiongate.engine.facts.registry._registry import analyze_registry_text
from visiongate.engine.tooling.lint._check import lint_text

ROOT = Path(__file__).parent.parent
CORPUS = Path(__file__).parent / "data" / "policy_corpus"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "expected.yaml").read_text())
SEED = int(os.environ.get("VISIONGATE_FUZZ_SEED", "13"))
CASES = int(os.environ.get("VISIONGATE_FUZZ_CASES", "2000"))
DEADLINE = 60.0
"""Seconds one case may run: generous, tripped only by a hang (a case takes milliseconds)."""


class Watchdog:
    """Ends the process with the case's name and every thread's stack if a case hangs.

    A hang cannot be interrupted from Python (it may sit in C code), so the only honest
    failure is to stop the run loudly; pytest then reports the crash."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.label = ""
        self.started = time.monotonic()
        self.done = threading.Event()

    def case(self, label: str) -> None:
        self.label, self.started = label, time.monotonic()

    def watch(self) -> None:
        while not self.done.wait(0.5):
            if time.monotonic() - self.started > self.deadline:
                sys.__stderr__.write(f"\npolicy fuzz: `{self.label}` ran over {self.deadline} s\n")
                faulthandler.dump_traceback(all_threads=True)
                os._exit(70)


@contextmanager
def watchdog(deadline: float = DEADLINE) -> Iterator[Watchdog]:
    dog = Watchdog(deadline)
    thread = threading.Thread(target=dog.watch, name="fuzz-watchdog", daemon=True)
    thread.start()
    try:
        yield dog
    finally:
        dog.done.set()
        thread.join()


def assert_located(diagnostics: Sequence[Diagnostic], file: str, label: str) -> None:
    for diagnostic in diagnostics:
        location = diagnostic.location
        where = f"{label}: {diagnostic.render()}"
        assert location.file == file, where
        assert location.line >= 1 and location.column >= 1, where
        assert "\n" not in diagnostic.message and "\n" not in diagnostic.help, where


def policy_seeds() -> list[str]:
    files = [
        ROOT / "policies" / "default.yaml",
        *sorted((ROOT / "policies" / "examples").glob("*.yaml")),
    ]
    files += sorted(CORPUS.glob("*.yaml"))
    # Small seeds only: a mutated 150-rule policy costs as much as thirty small ones.
    return [
        path.read_text()
        for path in files
        if not path.name.endswith((".test.yaml", "expected.yaml")) and path.stat().st_size < 8_000
    ]


# -- the regression corpus ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_sample_gives_its_diagnostic(name: str) -> None:
    compiled, diagnostics = analyze_policy_text((CORPUS / name).read_text(), name)
    want = EXPECTED[name]
    errors = [d for d in diagnostics if d.severity == "error"]
    if want.get("compiles"):
        assert compiled is not None and not errors, [d.render() for d in diagnostics]
        return
    assert errors, f"{name} loaded without errors"
    first = errors[0]
    assert (first.code, first.location.line, first.location.column) == (
        want["code"],
        want["line"],
        want["column"],
    ), first.render()


def test_every_corpus_file_has_an_expectation() -> None:
    assert {path.name for path in CORPUS.glob("*.yaml")} - {"expected.yaml"} == set(EXPECTED)


def test_sixty_five_copies_of_one_rule_compile_and_decide() -> None:
    compiled, _diagnostics = analyze_policy_text((CORPUS / "rules-65-copies.yaml").read_text())
    assert compiled is not None
    verdict = compiled.table[("text", "vision", "unset", "accepts")]
    assert (verdict.lane, verdict.rule, len(verdict.matched)) == ("text", "copy-0", 65)
    assert compiled.table[("auto", "vision", "unset", "accepts")].lane == "native"


def _rules_policy(count: int) -> str:
    rules = "".join(
        f"  - {{id: r{i}, when: {{mode: text}}, lane: text, reason: rule {i}}}\n"
        for i in range(count)
    )
    head = "policy: p\nversion: '1'\ndescription: d\nhit_policy: first\ndefault: text\n"
    return f"{head}rules:\n{rules}"


def test_too_many_rules_is_located_at_the_first_rule_past_the_bound() -> None:
    _compiled, diagnostics = analyze_policy_text(_rules_policy(MAX_RULES + 1), "big.yaml")
    (found,) = [d for d in diagnostics if d.code == "too-many-rules"]
    assert (found.location.line, found.location.column) == (MAX_RULES + 7, 5)


def test_a_policy_at_the_rule_bound_compiles() -> None:
    compiled, diagnostics = analyze_policy_text(_rules_policy(MAX_RULES), "big.yaml")
    assert compiled is not None, [d.render() for d in diagnostics[:3]]


@pytest.mark.parametrize(
    ("mutation", "code", "line"),
    [
        (
            lambda text: text.replace("description: a small", "description: " + "x" * 70_000),
            "too-large",
            3,
        ),
        (
            lambda text: text.replace("{mode: text}", "{mode: [" + "text, " * 12_000 + "]}"),
            "too-large",
            8,
        ),
        (
            lambda text: text + "big: {" + ", ".join(f"k{i}: v" for i in range(11_000)) + "}\n",
            "too-large",
            21,
        ),
        (lambda text: text + "x" * (9 * 1024 * 1024), "too-large", 1),
    ],
    ids=["long string", "long list", "long flow mapping", "file over 8 MiB"],
)
def test_oversized_input_is_refused_with_a_location(mutation: Any, code: str, line: int) -> None:
    text = mutation((CORPUS / "base.yaml").read_text())
    _compiled, diagnostics = analyze_policy_text(text, "big.yaml")
    assert [(d.code, d.location.line) for d in diagnostics if d.severity == "error"][:1] == [
        (code, line)
    ]


def test_a_five_megabyte_comment_padded_policy_loads() -> None:
    # Its speed is measured by bench/bench_compile.py; here only that it loads at all.
    padding = "# a comment that pads the policy to several megabytes of text\n" * 80_000
    compiled, diagnostics = analyze_policy_text(padding + (CORPUS / "base.yaml").read_text())
    assert compiled is not None, [d.render() for d in diagnostics]


# -- mutation fuzzing ---------------------------------------------------------------------------


def test_mutated_policies_never_escape_the_loader() -> None:
    seeds = policy_seeds()
    outcomes: Counter[str] = Counter()
    families: Counter[str] = Counter()
    with watchdog() as dog:
        for case in range(CASES):
            rng = random.Random(SEED * 1_000_003 + case)
            family, text = mutate(rng, rng.choice(seeds))
            label = f"seed {SEED} case {case} ({family})"
            dog.case(label)
            compiled, diagnostics = analyze_policy_text(text, "fuzz.yaml")
            assert_located(diagnostics, "fuzz.yaml", label)
            if case % 50 == 0:
                assert_located(lint_text(text, "fuzz.yaml").diagnostics, "fuzz.yaml", label)
            outcomes["clean" if compiled is not None else "refused"] += 1
            families.update(family.split("+"))
    assert sum(outcomes.values()) == CASES >= 2_000 or "VISIONGATE_FUZZ_CASES" in os.environ
    assert set(families) == set(FAMILIES), "every class of hostile input was exercised"
    assert outcomes["clean"] and outcomes["refused"]


def test_mutated_registries_never_escape_the_loader() -> None:
    seed = (ROOT / "policies" / "providers.yaml").read_text()
    with watchdog() as dog:
        for case in range(200):
            rng = random.Random(SEED * 7_919 + case)
            family, text = mutate(rng, seed)
            label = f"registry seed {SEED} case {case} ({family})"
            dog.case(label)
            _registry, diagnostics = analyze_registry_text(text, "providers.yaml")
            assert_located(diagnostics, "providers.yaml", label)


CONFIG_SEED = """\
model: {default: anthropic/claude-sonnet-4-5, provider: openrouter, supports_vision: true}
agent: {image_input_mode: auto}
auxiliary:
  vision: {provider: openrouter, model: google/gemini-3-flash, timeout: 30}
providers:
  my-proxy:
    tool_result_images: yes
    api: openai-chat
    models:
      gpt-4o: {supports_vision: true}
vision: {embed_target_bytes: 131072}
"""


def test_mutated_agent_configs_raise_only_policy_errors() -> None:
    with watchdog() as dog:
        for case in range(400):
            rng = random.Random(SEED * 104_729 + case)
            family, text = mutate(rng, CONFIG_SEED)
            label = f"config seed {SEED} case {case} ({family})"
            dog.case(label)
            try:
                config = AgentConfig.from_text(text, "agent.yaml")
            except PolicyError as error:
                assert_located(error.diagnostics, "agent.yaml", label)
            else:
                assert_located(config.diagnostics, "agent.yaml", label)
