"""The first decision's facts kept between processes (issue 37): a repeat reads them back and
loads no catalog, a changed input meets a new entry, a damaged entry is refused in one line
and the facts are resolved as if there were none."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from visiongate.engine import Gate
from visiongate.engine.facts import _catalog, _pairs, _tables
from visiongate.engine.facts._resolver import FactResolver, ResolvedFacts
from visiongate.engine.facts.registry import _registry

PAIRS = [("anthropic", "claude-sonnet-4-5"), ("anthropic", "claude-sonet-4-5"), ("x", "nope")]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("VISIONGATE_POLICY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("VISIONGATE_FACTS_CACHE", str(tmp_path / "refreshed"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    _fresh()
    yield tmp_path
    _fresh()


def _fresh() -> None:
    """What a new process starts with (the in-process caches emptied)."""
    for cached in (_catalog._bundled_catalog, _registry._bundled_registry):
        getattr(cached, "cache_clear", lambda: None)()  # not while a test refuses them


def _entries(home: Path) -> list[Path]:
    return sorted((home / "cache" / "facts" / _pairs.FOLDER).glob("*.table"))


def _record(provider: str, model: str) -> dict[str, Any]:
    record = Gate.load().decide(provider, model).record()
    return {k: v for k, v in record.items() if k not in ("decision_id", "timestamp")}


def _count_resolutions(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    asked: list[tuple[str, str]] = []
    original = FactResolver.resolve

    def resolve(self: FactResolver, provider: str, model: str) -> ResolvedFacts:
        asked.append((provider, model))
        return original(self, provider, model)

    monkeypatch.setattr(FactResolver, "resolve", resolve)
    return asked


def _refuse_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    def loaded() -> None:
        raise AssertionError("the catalog was loaded for a kept pair")

    monkeypatch.setattr(_catalog, "_bundled_catalog", loaded)
    monkeypatch.setattr(_registry, "_bundled_registry", loaded)


@pytest.mark.parametrize(("provider", "model"), PAIRS)
def test_a_repeat_reads_the_facts_back_and_loads_no_catalog(
    home: Path, monkeypatch: pytest.MonkeyPatch, provider: str, model: str
) -> None:
    first = Gate.load().decide(provider, model)
    assert len(_entries(home)) == 1
    _fresh()
    _refuse_catalog(monkeypatch)
    again = Gate.load().decide(provider, model)
    assert again.record()["facts"] == first.record()["facts"]
    assert again.extra == first.extra and again.warnings == first.warnings
    assert _record(provider, model) == {
        k: v for k, v in first.record().items() if k not in ("decision_id", "timestamp")
    }


def test_only_the_first_decision_of_a_gate_reads_the_pair(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Gate.load().decide(*PAIRS[0])
    asked = _count_resolutions(monkeypatch)
    gate = Gate.load()
    gate.decide(*PAIRS[0])
    assert asked == []
    gate.decide(*PAIRS[0])  # later decisions are the resolver's, memo and routes and all
    assert asked == [PAIRS[0]]


def test_a_changed_registry_meets_a_new_entry(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = _tables.bundled_data
    copy = home / "providers.yaml"
    copy.write_text(original("providers.yaml").read_text("utf-8"), "utf-8")
    monkeypatch.setattr(
        _tables, "bundled_data", lambda name: copy if name == "providers.yaml" else original(name)
    )
    before = _record(*PAIRS[0])
    status = copy.stat()
    os.utime(copy, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    _fresh()
    asked = _count_resolutions(monkeypatch)
    assert _record(*PAIRS[0]) == before
    assert asked == [PAIRS[0]] and len(_entries(home)) == 2


@pytest.mark.parametrize("present", ["refreshed catalog", "routes file"])
def test_nothing_is_kept_beside_a_refreshed_catalog_or_a_routes_file(
    home: Path, present: str
) -> None:
    where = {
        "refreshed catalog": home / "refreshed" / "models-dev.json",
        "routes file": home / "state" / "visiongate" / "routes.json",
    }[present]
    where.parent.mkdir(parents=True)
    where.write_text("{}", "utf-8")  # what it says is said at each run: never skipped
    Gate.load().decide(*PAIRS[0])
    assert _entries(home) == []


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_a_damaged_entry_is_refused_in_one_line_and_resolved_again(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    before = _record(*PAIRS[0])
    (entry,) = _entries(home)
    raw = entry.read_bytes()
    entry.write_bytes(
        {
            "flip": raw[:-10] + bytes([raw[-10] ^ 1]) + raw[-9:],
            "truncate": raw[: len(raw) // 2],
            "empty": b"",
        }[damage]
    )
    _fresh()
    asked = _count_resolutions(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="visiongate"):
        assert _record(*PAIRS[0]) == before
    refused = [record.getMessage() for record in caplog.records]
    assert len(refused) == 1 and "refused, built again" in refused[0], refused
    assert "\n" not in refused[0] and str(entry) in refused[0]
    assert asked == [PAIRS[0]] and entry.read_bytes() == raw  # the slow path, kept again


def test_facts_that_age_are_not_kept(home: Path) -> None:
    resolved = Gate.load().resolver.resolve(*PAIRS[0])
    aging = replace(resolved, expires=1e12)  # a local runtime's answer
    assert _pairs.resolved_pair("ollama", "llava", lambda: aging) is aging
    assert _entries(home) == []


def test_nothing_is_kept_when_the_cache_is_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VISIONGATE_POLICY_CACHE", "off")
    Gate.load().decide(*PAIRS[0])
    assert not list(home.rglob("*.table"))


def test_a_gate_given_any_input_does_not_read_pairs(home: Path) -> None:
    Gate.load(config={}).decide(*PAIRS[0])
    Gate.load(routes=False).decide(*PAIRS[0])
    assert _entries(home) == []
