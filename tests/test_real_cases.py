"""The lane for the models people run: a table of real (provider, model, config) cases with
the expected lane and the evidence for each (`tests/data/facts/real_cases.yaml`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from _local_runtimes import llamacpp, ollama
from _routing_helpers import without_proxies

from visiongate.engine import Gate
from visiongate.engine.facts._runtimes import RuntimeProbe

CASES = yaml.safe_load((Path(__file__).parent / "data" / "facts" / "real_cases.yaml").read_text())[
    "cases"
]


def test_the_table_holds_at_least_forty_real_cases() -> None:
    assert len(CASES) >= 40
    assert len({case["name"] for case in CASES}) == len(CASES)


@contextlib.contextmanager
def runtime_for(case: dict[str, Any]) -> Iterator[str]:
    kind = case.get("runtime")
    if kind is None:
        yield ""
        return
    with without_proxies(), ollama() if kind == "ollama" else llamacpp() as server:
        yield server.url


def _placed(value: Any, url: str) -> Any:
    return json.loads(json.dumps(value).replace("{runtime}", url))


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_a_real_case_gets_its_lane_for_the_stated_evidence(
    case: dict[str, Any], tmp_path: Path
) -> None:
    with runtime_for(case) as url:
        gate = Gate.load(config=_placed(case.get("config", {}), url), routes=False)
        gate.resolver.runtimes = RuntimeProbe(tmp_path / "runtimes.json")
        decision = gate.decide(case["provider"], case["model"])
        resolved = gate.resolver.resolve(case["provider"], case["model"])
    record = decision.record()
    got = {"lane": decision.lane, **decision.facts}
    for key, value in case["want"].items():
        assert got[key] == value, (key, record["provenance"])
    for fact, text in case.get("want_evidence", {}).items():
        assert text in record["provenance"][fact], record["provenance"][fact]
    for name, value in case.get("want_route", {}).items():
        got = getattr(resolved.route, name)
        assert (list(got) if isinstance(got, tuple) else got) == value, (name, resolved.route)
    if "want_warning" in case:
        assert any(case["want_warning"] in warning for warning in record["warnings"]), record[
            "warnings"
        ]


@pytest.mark.parametrize(
    ("provider", "model", "hint"),
    [
        ("openruter", "anthropic/claude-sonnet-4.5", "did you mean `openrouter`?"),
        ("anthropic", "claude-sonet-4-5", "did you mean `claude-sonnet-4-5`?"),
    ],
)
def test_a_misspelt_name_is_warned_about_in_the_record_and_on_stderr(
    capsys: pytest.CaptureFixture[str], provider: str, model: str, hint: str
) -> None:
    # Regression (issue 24): a misspelt provider or model failed closed to text, exit 0, with
    # no word about it anywhere.
    from visiongate.cli import main

    assert main(["decide", "--provider", provider, "--model", model, "--json"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["lane"] == "text"
    assert any(hint in warning for warning in record["warnings"])
    assert hint in captured.err and captured.err.startswith("visiongate decide: warning: ")


def test_a_model_with_no_near_name_gets_no_suggestion() -> None:
    gate = Gate.load(routes=False)
    assert gate.decide("openrouter", "my-team/vision-alias").warnings == ()
