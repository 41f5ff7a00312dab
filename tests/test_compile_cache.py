"""The compile cache: a policy compiled once is recalled by later processes, keyed by content
and engine, safe under concurrent writers, and trusted for nothing (issue 14)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from visiongate.engine import _compile_cache, _load
from visiongate.engine._load import analyze_policy_text, compile_policy_text
from visiongate.engine.tooling.lint._check import lint_text
from visiongate.engine.tooling.lint._report import render_json

ROOT = Path(__file__).parent.parent
POLICY = (ROOT / "policies" / "default.yaml").read_text()
LINT_DATA = Path(__file__).parent / "data" / "lint"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(_compile_cache.ENVIRONMENT, str(folder))
    return folder


def fresh_policy() -> str:
    """The default policy with content no cache has seen."""
    return POLICY.replace("description: >", f"# {uuid.uuid4()}\ndescription: >", 1)


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("durable-rules was asked to compile a cached policy")

    monkeypatch.setattr(_load, "match_cells", refuse)


def test_a_compiled_policy_is_recalled_without_validating_or_compiling_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = fresh_policy()
    first = compile_policy_text(text, "a.yaml")
    assert len(list(cache.glob("*.json"))) == 1
    _no_compiling(monkeypatch)
    monkeypatch.setattr(_load, "STAGES", ())  # no YAML/schema/compile stage may run
    second = compile_policy_text(text, "b.yaml")
    assert dict(second.table) == dict(first.table)
    assert dict(second.matches) == dict(first.matches)
    assert second.policy.path == "b.yaml" and second.policy.sha256 == first.policy.sha256


def _lint_fixtures() -> dict[str, str]:
    texts = {}
    for fixture in sorted(LINT_DATA.glob("*.yaml")):
        try:
            texts[fixture.name] = fixture.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # the `unreadable-file` fixture
    return texts


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_lint_finds_the_same_with_a_warm_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _lint_fixtures()
    cold = {name: render_json(_report(text, name)) for name, text in texts.items()}
    cached = {name for name, text in texts.items() if _compile_cache.recall(text) is not None}
    # Without entries the "warm" run would be the cold run again, equal by construction.
    assert len(cached) >= 10, sorted(cached)
    for name in sorted(set(texts) - cached):
        assert render_json(_report(texts[name], name)) == cold[name], name
    _no_compiling(monkeypatch)
    monkeypatch.setattr(_load, "STAGES", ())  # the warm findings come from the cache alone
    for name in sorted(cached):
        assert render_json(_report(texts[name], name)) == cold[name], name


def _report(text: str, name: str):  # type: ignore[no-untyped-def]
    from visiongate.engine.tooling.lint._check import LintReport

    return LintReport((lint_text(text, name),))


def test_another_content_or_another_engine_misses(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = fresh_policy()
    compile_policy_text(text, "a.yaml")
    assert _compile_cache.recall(text) is not None
    assert _compile_cache.recall(text + "\n") is None
    monkeypatch.setattr(_compile_cache, "engine_fingerprint", lambda: "another-engine")
    assert _compile_cache.recall(text) is None


def test_a_corrupt_entry_is_ignored_and_replaced(cache: Path) -> None:
    text = fresh_policy()
    expected = dict(compile_policy_text(text, "a.yaml").table)
    [entry] = cache.glob("*.json")
    for garbage in ("", "{not json", '{"format": 1}', json.dumps({"format": 1, "document": 3})):
        entry.write_text(garbage)
        assert dict(compile_policy_text(text, "a.yaml").table) == expected
        assert json.loads(entry.read_text())["format"] == _compile_cache.FORMAT


def test_tampered_match_sets_are_ignored(cache: Path) -> None:
    text = fresh_policy()
    expected = dict(compile_policy_text(text, "a.yaml").table)
    [entry] = cache.glob("*.json")
    raw = json.loads(entry.read_text())
    raw["matches"] = [[3] for _cell in raw["matches"]]  # `native-mode` for every cell
    entry.write_text(json.dumps(raw))
    compiled, _found = analyze_policy_text(text, "a.yaml")
    assert compiled is not None and dict(compiled.table) == expected


def test_a_tampered_document_is_ignored(cache: Path) -> None:
    text = fresh_policy()
    compile_policy_text(text, "a.yaml")
    [entry] = cache.glob("*.json")
    raw = json.loads(entry.read_text())
    del raw["document"]["rules"]
    entry.write_text(json.dumps(raw))
    assert len(compile_policy_text(text, "a.yaml").policy.rules) == 7


@pytest.mark.parametrize("setting", ["a-file", "off"])
def test_an_unusable_or_disabled_cache_is_ignored(
    setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(_compile_cache.ENVIRONMENT, str(blocker) if setting == "a-file" else "off")
    text = fresh_policy()
    assert compile_policy_text(text, "a.yaml").policy.name == "default"
    assert _compile_cache.recall(text) is None


WORKER = """
import sys
from visiongate.engine._load import compile_policy_text
text = open(sys.argv[1]).read()
table = compile_policy_text(text, "p.yaml").table
print(sorted((",".join(c), v.lane, v.rule or "") for c, v in table.items()))
"""


def test_concurrent_writers_leave_one_whole_entry(tmp_path: Path, cache: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(fresh_policy())
    environment = {"VISIONGATE_POLICY_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(policy)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for _ in range(6)
    ]
    results = [process.communicate(timeout=120) for process in processes]
    assert all(process.returncode == 0 for process in processes), results
    assert len({out for out, _err in results}) == 1
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".json")] == []
    [entry] = cache.glob("*.json")
    assert _compile_cache.recall(policy.read_text()) is not None
    assert json.loads(entry.read_text())["format"] == _compile_cache.FORMAT


def test_a_policy_text_with_a_lone_surrogate_does_not_break_the_cache(cache: Path) -> None:
    """The loader refuses such a text; the cache must not raise before it can."""
    compiled, found = analyze_policy_text(fresh_policy() + "# \ud800\n", "a.yaml")
    assert compiled is None
    assert [(d.code, d.message) for d in found] == [
        ("yaml-syntax", "a lone surrogate is not a character")
    ]
    assert _compile_cache.recall("policy: \ud800") is None


def test_a_recalled_policy_carries_the_yaml_as_parsed_without_parsing_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 37): a recalled policy parsed its YAML again for the locations; the
    entry now holds them, and what it rebuilds is what the parser made."""
    from visiongate.engine._yaml import _parse

    text = fresh_policy()
    first = compile_policy_text(text, "a.yaml")

    def refuse(*_args: object, **_options: object) -> None:
        raise AssertionError("a recalled policy was parsed again")

    monkeypatch.setattr(_parse, "parse_yaml", refuse)  # what every `load_yaml` calls
    second = compile_policy_text(text, "a.yaml")
    assert second.policy.source == first.policy.source  # data, text, every location table
    assert second.policy.rules == first.policy.rules


def test_an_entry_whose_parsed_yaml_is_damaged_is_ignored(cache: Path) -> None:
    text = fresh_policy()
    first = compile_policy_text(text, "a.yaml")
    (entry,) = cache.glob("*.json")
    raw = json.loads(entry.read_text())
    raw["source"]["locations"][0][0] = [{"not": "a key"}]
    entry.write_text(json.dumps(raw))
    assert _compile_cache.recall(text) is None
    assert compile_policy_text(text, "a.yaml").policy.source == first.policy.source
