"""Audit filters a newcomer mistypes (issue 28): a closed-set value is a usage error with a
did-you-mean, never "0 decisions ... none"; an open-set value no record carries is said in
the summary, with the closest value the traces hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli_helpers import run, validate_output

from visiongate.engine import Gate
from visiongate.engine.tooling.audit import _parallel
from visiongate.engine.tooling.audit._aggregate import Query, aggregate
from visiongate.engine.tooling.audit._inputs import expand
from visiongate.engine.tooling.audit._parallel import aggregate_in_parallel


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("audit") / "trace.jsonl"
    gate = Gate.load(trace=path, routes=False)
    gate.decide("openrouter", "deepseek/deepseek-v3.2")
    gate.decide("anthropic", "claude-sonnet-4-5")
    return path


CLOSED_TYPOS = {
    "--lane nativ": (["--lane", "nativ"], "`--lane nativ` is not a lane: did you mean `native`?"),
    "--source mpc": (["--source", "mpc"], "`--source mpc` is not a source: did you mean `mcp`?"),
    "--lane native,txt": (["--lane", "native,txt"], "did you mean `text`?"),
    "--group-by provder": (["--group-by", "provder"], "did you mean `provider`?"),
    "--policy-sha not hex": (["--policy-sha", "xyz"], "is not a sha256 prefix"),
}


@pytest.mark.parametrize(("argv", "message"), CLOSED_TYPOS.values(), ids=CLOSED_TYPOS)
def test_a_closed_set_typo_is_a_usage_error_with_did_you_mean(
    argv: list[str], message: str, trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "audit", str(trace), *argv)
    assert (code, out) == (2, "")
    assert err.startswith("visiongate audit: error: ") and message in err, err


OPEN_MISSES = {
    "provider": (["--provider", "openruter"], "--provider openruter; did you mean openrouter?"),
    "model": (["--model", "claude-sonet-4-5"], "--model claude-sonet-4-5; did you mean"),
    "rule": (["--rule", "native-by-operater"], "--rule native-by-operater"),
    "no close value": (["--provider", "zzzz"], "no decision matched --provider zzzz"),
}


@pytest.mark.parametrize(("argv", "note"), OPEN_MISSES.values(), ids=OPEN_MISSES)
def test_an_open_set_value_that_matches_nothing_is_said_in_the_summary(
    argv: list[str], note: str, trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "audit", str(trace), *argv)
    assert code == 0
    first, second = out.splitlines()[:2]
    assert first.startswith("0 decision(s)")
    assert second.startswith("no decision matched ") and note in second, out


def test_only_the_values_that_match_nothing_are_named(
    trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "audit", str(trace), "--provider", "openrouter,nosuch")
    assert code == 0 and out.startswith("1 decision(s)")
    assert "no decision matched --provider nosuch\n" in out
    assert "--provider openrouter" not in out


def test_a_value_is_matched_even_when_another_filter_leaves_its_records_out(trace: Path) -> None:
    # `--provider openrouter --lane native`: openrouter is in the trace; it is the pair that
    # matches nothing, which the summary's zero already says.
    result = aggregate(
        expand([str(trace)]),
        Query(providers=frozenset({"openrouter"}), lanes=frozenset({"native"})),
    )
    assert result.decisions == 0 and result.unmatched == ()


def test_the_json_summary_lists_unmatched_filters_in_its_schema(
    trace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = run(capsys, "audit", str(trace), "--provider", "openruter", "--json")
    assert code == 0
    document = json.loads(out)
    validate_output("audit", document)
    assert document["unmatched_filters"] == [
        {"option": "provider", "value": "openruter", "suggestion": "openrouter"}
    ]


def test_readers_in_parallel_merge_what_they_matched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Large files are read in parts by several processes: a value one part saw is matched.
    monkeypatch.setattr(_parallel, "SPLIT_BYTES", 1024)
    path = tmp_path / "big.jsonl"
    gate = Gate.load(routes=False)
    first = json.dumps(gate.decide("openrouter", "deepseek/deepseek-v3.2").record())
    last = json.dumps(gate.decide("anthropic", "claude-sonnet-4-5").record())
    path.write_text("\n".join([first] * 200 + [last]) + "\n")
    assert len(_parallel.plan(expand([str(path)]), 2)) == 2
    query = Query(providers=frozenset({"anthropic", "openruter"}))
    result = aggregate_in_parallel(expand([str(path)]), query, None, 2)
    assert result.decisions == 1
    assert [(u.value, u.suggestion) for u in result.unmatched] == [("openruter", "openrouter")]
