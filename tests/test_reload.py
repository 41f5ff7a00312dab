"""Hot reload applies only complete policies (issue 12).

A writer that rewrites the policy in pieces exposes every prefix of it to the gate, and many
prefixes are valid policies that lose rules or invariants. A reload applies a change only
when the file is stable (the same at two polls, or renamed into place and left alone), loads,
and keeps every invariant in force unless it lists the id under `drops_invariants`.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from visiongate.engine import Gate
from visiongate.engine._load import analyze_policy_text, bundled_policy_text
from visiongate.engine._policy import source_sha256
from visiongate.engine._watch import QUIET_SECONDS, PolicyWatcher

DEFAULT = bundled_policy_text("default")


def write_atomically(path: Path, text: str, age: float = 0.0) -> None:
    """What the README asks of operators: a temporary file, then a rename over the policy."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    if age:
        stamp = time.time() - age
        os.utime(temporary, (stamp, stamp))
    os.replace(temporary, path)


def test_a_file_rewritten_in_place_is_applied_at_the_second_poll_that_sees_it(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    changed = DEFAULT + "\n# edited in place\n"
    policy.write_text(changed)
    first = gate.reload(wait=False)
    assert (first.changed, first.waiting) == (False, True)
    second = gate.reload(wait=False)
    assert second.changed and second.sha256 == source_sha256(changed)


def test_a_direct_reload_waits_for_its_own_second_poll(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    policy.write_text(DEFAULT + "\n# edited\n")
    assert gate.reload().changed  # polls, waits QUIET_SECONDS, polls again


def test_a_file_renamed_into_place_is_applied_at_the_first_poll(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    write_atomically(policy, DEFAULT + "\n# deployed\n", age=10 * QUIET_SECONDS)
    assert gate.reload(wait=False).changed


@pytest.mark.slow  # every prefix of a policy, written and reloaded
def test_no_prefix_of_the_policy_is_applied_at_first_sight(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    other = DEFAULT.replace('version: "1.0.0"', 'version: "1.0.1"')
    valid = 0
    # Every line end (where most valid prefixes stop) and every 16th byte in between.
    ends = sorted({i + 1 for i, c in enumerate(other) if c == "\n"} | set(range(1, len(other), 16)))
    for end in ends[:-1]:
        prefix = other[:end]
        policy.write_text(prefix)
        result = gate.reload(wait=False)
        assert not result.changed, f"the first {end} bytes were applied"
        valid += prefix.endswith("\n") and analyze_policy_text(prefix)[0] is not None
    assert valid, "some prefixes are valid policies: only stability keeps them out"
    assert gate.policy_ref.sha256 == source_sha256(DEFAULT)


def test_a_policy_that_loses_an_invariant_is_refused_unless_it_says_so(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    start = DEFAULT.index("  - id: auto-respects-configured-aux")
    end = DEFAULT.index("  - id: unverified-routes-only-for-models-that-see")
    losing = DEFAULT[:start] + DEFAULT[end:]
    write_atomically(policy, losing)
    result = gate.reload()
    assert not result.ok and result.sha256 == source_sha256(DEFAULT)
    assert [d.code for d in result.diagnostics] == ["invariant-dropped"]
    assert "auto-respects-configured-aux" in result.diagnostics[0].message
    decision = gate.decide_facts("auto", "vision", "set", "accepts")
    assert decision.policy.sha256 == source_sha256(DEFAULT)
    assert any("invariant-dropped" in warning for warning in decision.warnings)
    saying_so = losing + "drops_invariants: [auto-respects-configured-aux]\n"
    write_atomically(policy, saying_so)
    assert gate.reload().changed
    assert gate.decide_facts("auto", "vision", "set", "accepts").warnings == ()


def test_a_broken_file_is_reported_once_not_at_every_poll(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    write_atomically(policy, DEFAULT.replace("lane: native", "lane: nativ"))
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        results = [gate.reload() for _ in range(4)]
    assert [result.ok for result in results] == [False] * 4
    assert caplog.text.count("failed to load") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_at_the_policy_path_is_reported_once_not_at_every_poll(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression (issue 36): a FIFO swapped in at the watched path logged its refusal at
    every poll (28 lines in 25 s); it is said once, and every decision keeps the warning
    until the file reads again."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    os.mkfifo(tmp_path / "fifo")
    os.replace(tmp_path / "fifo", policy)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        results = [gate.reload(wait=False) for _ in range(4)]
    assert [result.ok for result in results] == [False] * 4
    assert caplog.text.count("not a regular file") == 1, caplog.text
    assert "not a regular file" in gate.decide_facts("auto", "vision", "set", "accepts").warnings[0]
    write_atomically(policy, DEFAULT, age=1.0)
    assert gate.reload().ok and gate.decide_facts("auto", "vision", "set", "accepts").warnings == ()
    os.mkfifo(tmp_path / "fifo")
    os.replace(tmp_path / "fifo", policy)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        gate.reload(wait=False)
    assert caplog.text.count("not a regular file") == 2  # a new refusal is said again


# -- a writer rewriting the policy in pieces, against watch() and deciding threads ------------

WRITER = """
import json, os, sys, time
path, rounds, spread, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
versions = json.loads(sys.stdin.read())
longest = 0.0
for round_ in range(rounds):
    data = versions[round_ % len(versions)].encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_TRUNC)
    last = time.monotonic()
    for end in range(len(data)):  # one byte at a time: every prefix is on disk once
        os.write(descriptor, data[end : end + 1])
        if end % 16 == 15:  # spread the write over a few polls, as a slow writer would
            time.sleep(spread * 16 / len(data))
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    os.close(descriptor)
    time.sleep(pause)
print(json.dumps({"longest_gap": longest}))
"""


@pytest.mark.slow  # a writer and deciders racing
def test_half_written_policies_are_never_decided_under(tmp_path: Path) -> None:
    interval = 0.1
    versions = [DEFAULT + f"\n# version {name}\n" for name in ("b", "a")]
    complete = {source_sha256(text) for text in versions}
    policy = tmp_path / "policy.yaml"
    policy.write_text(versions[1])
    gate = Gate.load(policy)
    applied: list[str] = []
    gate.watch(interval=interval, on_reload=lambda result: applied.append(result.sha256))
    seen: list[set[str]] = [set() for _ in range(4)]
    done = threading.Event()

    def decide(shas: set[str]) -> None:
        while not done.is_set():
            shas.add(gate.decide_facts("auto", "vision", "unset", "accepts").policy.sha256)

    threads = [threading.Thread(target=decide, args=(shas,)) for shas in seen]
    for thread in threads:
        thread.start()
    try:
        writer = subprocess.run(
            [
                sys.executable,
                "-c",
                WRITER,
                str(policy),
                "5",  # b, a, b, a, b: ends on a version other than the first
                f"{2.5 * interval}",
                f"{4 * interval}",
            ],
            input=json.dumps(versions),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        # The last version is complete and stays: with the deciders still running, the
        # watcher must apply it (bounded), so the test cannot pass by never reloading.
        final = source_sha256(versions[0])
        deadline = time.monotonic() + 60
        while gate.policy_ref.sha256 != final and time.monotonic() < deadline:
            time.sleep(interval)
    finally:
        done.set()
        for thread in threads:
            thread.join()
        gate.close()
    decided_under = set().union(*seen)
    gap = json.loads(writer.stdout)["longest_gap"]
    assert decided_under <= complete, (
        f"{len(decided_under - complete)} incomplete policies were decided under "
        f"(the writer's longest pause between two bytes: {gap * 1000:.1f} ms)"
    )
    assert applied and set(applied) <= complete, "only complete versions were applied"
    assert gate.policy_ref.sha256 == final, "the last complete version was applied once written"


def test_a_check_that_read_an_older_version_never_installs_it_over_a_newer_one(
    tmp_path: Path,
) -> None:
    """The file is read outside the watcher's lock, so a read can be overtaken; it is acted
    on only if the file is still as it was read."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    watcher = PolicyWatcher(gate, policy)
    older, newer = DEFAULT + "\n# older\n", DEFAULT + "\n# newer\n"
    write_atomically(policy, older, age=1)
    overtake = lambda: write_atomically(policy, newer, age=1)  # noqa: E731
    overtaken = watcher.reload(wait=False, on_read=overtake)
    assert (overtaken.changed, overtaken.waiting) == (False, True)
    assert gate.policy_ref.sha256 == source_sha256(DEFAULT)
    # Two polls: the newer file may have the inode number the first one freed.
    assert watcher.reload().sha256 == source_sha256(newer)


class _SlowInstall:
    """A gate whose `install` waits for a signal: another check's compile holding the lock."""

    def __init__(self, gate: Gate) -> None:
        self.gate, self.installing, self.go = gate, threading.Event(), threading.Event()

    def compiled_in_force(self):  # type: ignore[no-untyped-def]
        return self.gate.compiled_in_force()

    def install(self, compiled, warnings=()):  # type: ignore[no-untyped-def]
        self.installing.set()
        assert self.go.wait(30)
        self.gate.install(compiled, warnings)


def test_a_background_check_reads_while_another_compiles_and_answers_after_it(
    tmp_path: Path,
) -> None:
    """The proxy gives the read a short deadline and the compile a long one: a check must
    report its read even while another check (the watch thread's) holds the lock."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(DEFAULT)
    gate = Gate.load(policy)
    target = _SlowInstall(gate)
    watcher = PolicyWatcher(target, policy)
    edited = DEFAULT + "\n# edited\n"
    write_atomically(policy, edited, age=1)
    polling = threading.Thread(target=watcher.reload, kwargs={"wait": False})
    polling.start()
    try:
        assert target.installing.wait(30), "the first check compiled the edit"
        check = watcher.reload_in_background()
        check.read.result(timeout=30)
        assert not check.result.done(), "the second check waits for the lock, after its read"
    finally:
        target.go.set()
        polling.join(30)
    assert check.result.result(timeout=30).sha256 == source_sha256(edited)
    assert gate.policy_ref.sha256 == source_sha256(edited)
    watcher.close()
