"""The gate: deciding, traces, reloads that keep the last good policy, the public surface."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import visiongate.engine
from visiongate.engine import FactError, Gate, PolicyError
from visiongate.engine._load import bundled_policy_text
from visiongate.engine.facts import ResolvedFacts

RECORD_KEYS = {
    "schema_version",
    "decision_id",
    "timestamp",
    "policy",
    "facts",
    "provenance",
    "rule",
    "matched",
    "reason",
    "lane",
    "warnings",
}


def test_public_surface_is_exactly_the_intended_names() -> None:
    assert sorted(visiongate.engine.__all__) == sorted(
        [
            "FACTS",
            "INVISIBLE_CHANNELS",
            "LANES",
            "SOURCES",
            "CellVerdict",
            "CompiledPolicy",
            "Decision",
            "DecisionIds",
            "Diagnostic",
            "ExecutionSettings",
            "FactError",
            "Gate",
            "InvisibleMode",
            "JsonlTrace",
            "Location",
            "NativeSettings",
            "PolicyCheck",
            "PolicyError",
            "PolicyRef",
            "ReloadResult",
            "SanitizeSettings",
            "VisiongateError",
            "all_cells",
            "analyze_policy_text",
            "load_policy",
        ]
    )


def test_decide_facts_is_a_lookup_with_the_winning_rule_and_reason() -> None:
    gate = Gate.load()
    decision = gate.decide_facts(mode="auto", catalog="vision", aux="unset", path="accepts")
    assert (decision.lane, decision.rule) == ("native", "auto-vision-model")
    assert decision.matched == ("auto-vision-model",)
    assert "catalog says this model reads images" in decision.reason
    record = decision.record()
    assert set(record) >= RECORD_KEYS
    assert record["policy"]["name"] == "default"
    assert len(record["policy"]["sha256"]) == 64
    assert record["timestamp"].endswith("Z")


def test_a_decisions_extra_is_the_resolved_facts_or_none() -> None:
    # Typed `ResolvedFacts | None` (it was `Any`, checked with isinstance by its one reader).
    gate = Gate.load()
    assert gate.decide_facts("auto", "vision", "unset", "accepts").extra is None
    resolved = gate.decide("anthropic", "claude-sonnet-4-5").extra
    assert isinstance(resolved, ResolvedFacts) and resolved.route.provider == "anthropic"
    assert resolved.cell == gate.decide("anthropic", "claude-sonnet-4-5").cell


def test_decision_ids_are_unique() -> None:
    gate = Gate.load()
    ids = {gate.decide_facts("text", "vision", "set", "accepts").decision_id for _ in range(500)}
    assert len(ids) == 500


def test_a_fact_outside_its_domain_is_refused_with_a_suggestion() -> None:
    gate = Gate.load()
    with pytest.raises(FactError, match="did you mean `native`"):
        gate.decide_facts(mode="nativ", catalog="vision", aux="unset", path="accepts")


def test_decide_resolves_facts_and_records_provenance() -> None:
    gate = Gate.load(config={"agent": {"image_input_mode": "TEXT "}})
    decision = gate.decide("anthropic", "claude-sonnet-4-5")
    assert decision.facts["mode"] == "text"
    assert decision.lane == "text"
    record = decision.record()
    assert record["provider"] == "anthropic" and record["model"] == "claude-sonnet-4-5"
    assert set(record["provenance"]) == {"mode", "catalog", "aux", "path"}


def test_every_decision_goes_to_the_trace_file(tmp_path: Path) -> None:
    trace = tmp_path / "trace" / "decisions.jsonl"
    gate = Gate.load(trace=trace)
    gate.decide_facts("auto", "vision", "unset", "accepts")
    gate.decide("openrouter", "deepseek/deepseek-v3.2")
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [line["lane"] for line in lines] == ["native", "text"]
    assert all(set(line) >= RECORD_KEYS for line in lines)


def test_a_callable_sink_receives_records() -> None:
    seen: list[dict[str, Any]] = []
    gate = Gate.load(trace=seen.append)
    gate.decide_facts("native", "unknown", "set", "refuses")
    assert seen[0]["rule"] == "route-refuses-images"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


# never-pixels has its own invariant: switching to it drops default's on purpose.
DEFAULT_INVARIANTS = (
    "text-mode-never-attaches, refusing-route-never-attaches, native-mode-attaches-where-possible,"
    " auto-only-trusts-the-catalog, auto-respects-configured-aux,"
    " unverified-routes-only-for-models-that-see"
)
NEVER_PIXELS = (
    bundled_policy_text("examples/never-pixels") + f"drops_invariants: [{DEFAULT_INVARIANTS}]\n"
)


def test_reload_picks_up_a_changed_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    _write(policy, bundled_policy_text("default"))
    gate = Gate.load(policy)
    first_sha = gate.policy_ref.sha256
    assert gate.reload().changed is False
    _write(policy, NEVER_PIXELS)
    result = gate.reload()
    assert result.changed and result.ok and result.sha256 != first_sha
    assert gate.decide_facts("auto", "vision", "unset", "accepts").lane == "text"


def test_a_failed_reload_keeps_the_last_good_policy_and_says_so(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    _write(policy, bundled_policy_text("default"))
    gate = Gate.load(policy)
    good_sha = gate.policy_ref.sha256
    _write(policy, bundled_policy_text("default").replace("lane: native", "lane: nativ"))
    result = gate.reload()
    assert result.changed and not result.ok
    assert any(d.code == "unknown-lane" for d in result.diagnostics)
    decision = gate.decide_facts("auto", "vision", "unset", "accepts")
    assert decision.lane == "native"
    assert decision.record()["policy"]["sha256"] == good_sha
    assert any("failed to load" in warning for warning in decision.warnings)
    # Fixing the file clears the warning.
    _write(policy, bundled_policy_text("default") + "\n# fixed\n")
    assert gate.reload().ok
    assert gate.decide_facts("auto", "vision", "unset", "accepts").warnings == ()


def test_a_deleted_policy_file_keeps_the_last_good_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    _write(policy, bundled_policy_text("default"))
    gate = Gate.load(policy)
    policy.unlink()
    result = gate.reload()
    assert not result.ok
    assert gate.decide_facts("text", "vision", "set", "accepts").lane == "text"


def test_watch_reloads_in_the_background(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    _write(policy, bundled_policy_text("default"))
    gate = Gate.load(policy)
    reloaded = threading.Event()
    gate.watch(interval=0.05, on_reload=lambda result: reloaded.set())
    try:
        _write(policy, NEVER_PIXELS)
        assert reloaded.wait(timeout=10)
        assert gate.compiled.policy.name == "never-pixels"
    finally:
        gate.close()


def test_concurrent_decisions_during_reloads_always_see_one_whole_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    default = bundled_policy_text("default") + "drops_invariants: [no-pixels-anywhere]\n"
    never = NEVER_PIXELS
    _write(policy, default)
    gate = Gate.load(policy)
    names = {"default": None, "never-pixels": None}
    problems: list[str] = []
    stop = time.monotonic() + 1.0

    def decide() -> None:
        while time.monotonic() < stop:
            decision = gate.decide_facts("auto", "vision", "unset", "accepts")
            expected = "native" if decision.policy.name == "default" else "text"
            if decision.lane != expected or decision.policy.name not in names:
                problems.append(f"{decision.policy.name} gave {decision.lane}")

    threads = [threading.Thread(target=decide) for _ in range(4)]
    for thread in threads:
        thread.start()
    for index in range(6):
        _write(policy, (never if index % 2 == 0 else default) + f"\n# {index}\n")
        assert gate.reload().changed
    for thread in threads:
        thread.join()
    assert problems == []


def test_loading_a_broken_policy_raises_with_diagnostics(tmp_path: Path) -> None:
    policy = tmp_path / "broken.yaml"
    _write(policy, "policy: x\nversion: 1\n")
    with pytest.raises(PolicyError) as raised:
        Gate.load(policy)
    assert {d.code for d in raised.value.diagnostics} == {"missing-key"}


def test_decide_without_trace_writes_nothing_so_an_adapter_can_write_one_full_record() -> None:
    seen: list[dict[str, Any]] = []
    gate = Gate.load(trace=seen.append)
    decision = gate.decide("anthropic", "claude-sonnet-4-5", trace=False)
    assert seen == []
    gate.trace(decision.record(source="mcp"))
    assert [record["source"] for record in seen] == ["mcp"]


def test_a_decision_carries_the_policy_that_made_it_across_a_reload(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    _write(policy, bundled_policy_text("default"))
    gate = Gate.load(policy)
    before = gate.decide("anthropic", "claude-sonnet-4-5")
    _write(policy, bundled_policy_text("examples/describe-mcp"))
    assert gate.reload().ok
    after = gate.decide("anthropic", "claude-sonnet-4-5")
    assert before.full_policy is not None and after.full_policy is not None
    assert before.full_policy.execution.text_action("mcp") == "reference"
    assert after.full_policy.execution.text_action("mcp") == "describe"
    assert before.full_policy.sha256 == before.policy.sha256 != after.policy.sha256
