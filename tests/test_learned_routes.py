"""Routes learned at run time: `gate.report_refusal`, the overlay file, `visiongate routes`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from visiongate.cli import main
from visiongate.engine import Decision, Gate
from visiongate.engine.facts._routes import LearnedRoute, RouteOverlay


@contextmanager
def stamped() -> Iterator[Callable[[str], set[str]]]:
    """What a route learned inside the block can be dated: the UTC day the block began or the
    day it ended. A constant read at import failed every run that crossed midnight (seen at
    00:01 UTC). `spelt(template)` gives the template with each of the two days put in."""
    days = [datetime.now(UTC).strftime("%Y-%m-%d")]
    yield lambda template: {template.format(day=day) for day in days}
    days.append(datetime.now(UTC).strftime("%Y-%m-%d"))


REFUSAL = "HTTP 400: Invalid content type. image_url is only supported by certain models"


def test_a_reported_refusal_closes_the_route_with_its_provenance(tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    gate = Gate.load(routes=routes)
    before = gate.decide("openrouter", "anthropic/claude-sonnet-4.5")
    assert (before.facts["path"], before.lane) == ("unverified", "native")
    with stamped() as spelt:
        learned = gate.report_refusal("OpenRouter", " anthropic/claude-sonnet-4.5 ", REFUSAL)
    assert (learned.provider, learned.model, learned.verdict) == (
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        "refuses",
    )
    after = gate.decide("openrouter", "anthropic/claude-sonnet-4.5")
    assert (after.facts["path"], after.lane, after.rule) == (
        "refuses",
        "text",
        "route-refuses-images",
    )
    assert after.provenance["path"] in spelt(f"routes.json: learned {{day}}: {REFUSAL}")
    assert json.loads(routes.read_text())["routes"][0]["detail"] == REFUSAL


def test_a_refusal_is_keyed_by_the_registry_id(tmp_path: Path) -> None:
    gate = Gate.load(routes=tmp_path / "routes.json")
    gate.report_refusal("claude", "claude-sonnet-4-5", "HTTP 400: image blocks refused")
    assert gate.decide("anthropic", "claude-sonnet-4-5").facts["path"] == "refuses"
    assert gate.decide("anthropic", "claude-opus-4-1").facts["path"] == "accepts"


def test_image_data_and_keys_never_reach_the_file(tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    gate = Gate.load(routes=routes)
    body = (
        'HTTP 400 {"error": "bad image", "echo": "data:image/png;base64,'
        + "iVBORw0KGgo" * 20
        + '", "auth": "Bearer sk-test-0123456789abcdefghij"}'
    )
    gate.report_refusal("openrouter", "x/y", body)
    text = routes.read_text()
    assert "iVBORw0KGgo" not in text and "sk-test" not in text and "Bearer" not in text
    assert "(redacted)" in text and "bad image" in text


def test_another_gate_on_the_same_file_sees_the_refusal(tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    reader = Gate.load(routes=routes)
    assert reader.decide("openrouter", "a/b").facts["path"] == "unverified"
    Gate.load(routes=routes).report_refusal("openrouter", "a/b", "HTTP 400 refused")
    reader.resolver.routes._checked = float("-inf")  # skip the once-a-second wait
    assert reader.decide("openrouter", "a/b").facts["path"] == "refuses"


WRITER = """
import sys
from visiongate.engine import Gate
gate = Gate.load(routes=sys.argv[1])
for round in range(5):
    gate.report_refusal("openrouter", f"model-{sys.argv[2]}-{round}", "HTTP 400 refused")
"""


def test_several_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(routes), str(number)])
        for number in range(6)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0] * 6
    models = {entry["model"] for entry in json.loads(routes.read_text())["routes"]}
    assert models == {f"model-{n}-{r}" for n in range(6) for r in range(5)}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["routes.json", "routes.json.lock"]


def test_a_probed_verdict_settles_a_route_either_way(tmp_path: Path) -> None:
    gate = Gate.load(routes=tmp_path / "routes.json")
    with stamped() as spelt:
        gate.resolver.learn(
            LearnedRoute.today("openrouter", "a/b", "accepts", "probed", "read the code back")
        )
    decision = gate.decide("openrouter", "a/b")
    assert decision.facts["path"] == "accepts"
    assert decision.provenance["path"] in spelt("routes.json: probed {day}: read the code back")


def test_a_damaged_file_counts_as_empty_and_says_why(tmp_path: Path) -> None:
    routes = tmp_path / "routes.json"
    routes.write_text("{not json")
    gate = Gate.load(routes=routes)
    decision = gate.decide("openrouter", "a/b")
    assert decision.facts["path"] == "unverified"
    assert any("is not a routes file: not JSON" in warning for warning in decision.warnings)
    with pytest.raises(ValueError, match="not JSON"):
        gate.report_refusal("openrouter", "a/b", "HTTP 400")
    assert routes.read_text() == "{not json"  # nothing lost


def test_the_config_names_the_file(tmp_path: Path) -> None:
    routes = tmp_path / "mine.json"
    gate = Gate.load(config={"visiongate": {"routes_file": str(routes)}})
    gate.report_refusal("openrouter", "a/b", "HTTP 400")
    assert routes.is_file()
    assert gate.resolver.routes.path == routes


def test_the_default_file_is_under_the_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    Gate.load().report_refusal("openrouter", "a/b", "HTTP 400")
    assert (tmp_path / "visiongate" / "routes.json").is_file()


def test_no_routes_file_learns_nothing(tmp_path: Path) -> None:
    gate = Gate.load(routes=False)
    with pytest.raises(ValueError, match="no routes file is configured"):
        gate.report_refusal("openrouter", "a/b", "HTTP 400")


def test_routes_list_and_forget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    routes = tmp_path / "routes.json"
    with stamped() as spelt:
        Gate.load(routes=routes).report_refusal("claude", "claude-sonnet-4-5", "HTTP 400 no images")
    assert main(["routes", "list", "--routes", str(routes)]) == 0
    out = capsys.readouterr().out
    line = "anthropic / claude-sonnet-4-5  refuses  learned {day}: HTTP 400 no images"
    assert any(spelling in out for spelling in spelt(line)), out
    assert main(["routes", "list", "--routes", str(routes), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["routes"][0]["how"] == "learned"
    assert main(["routes", "forget", "claude", "claude-sonnet-4-5", "--routes", str(routes)]) == 0
    assert "forgot `anthropic` / `claude-sonnet-4-5`" in capsys.readouterr().out
    assert main(["routes", "forget", "claude", "claude-sonnet-4-5", "--routes", str(routes)]) == 1
    assert RouteOverlay(routes).entries() == ()
    assert main(["routes"]) == 2


def test_registry_show_prints_verdicts_evidence_and_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["registry", "show", "bedrock"]) == 0
    out = capsys.readouterr().out
    assert "provider: amazon-bedrock (aliases: bedrock, aws-bedrock)" in out
    assert "when the catalog says vision" in out
    assert "cites: docs.aws.amazon.com/bedrock/latest/APIReference" in out
    assert main(["registry", "show", "openrouter", "anthropic/claude-sonnet-4.5:nitro"]) == 0
    out = capsys.readouterr().out
    assert "path:     unverified (verdict accepts, evidence field)" in out
    assert "model:    routing variant `:nitro` stripped" in out
    assert main(["registry", "show", "gemini", "gemini-3-pro-preview", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["path"], document["evidence"], document["api"]) == (
        "accepts",
        "documented",
        "gemini",
    )
    assert document["where"].startswith("providers.yaml:")
    assert main(["registry", "show", "my-proxy"]) == 2  # a failed look-up (issue 35)
    assert "`my-proxy` is not in providers.yaml" in capsys.readouterr().err


def test_registry_show_uses_learned_routes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    routes = tmp_path / "routes.json"
    with stamped() as spelt:
        Gate.load(routes=routes).report_refusal("openrouter", "a/b", "HTTP 400 refused")
    assert main(["registry", "show", "openrouter", "a/b", "--routes", str(routes)]) == 0
    out = capsys.readouterr().out
    assert "path:     refuses (verdict refuses, evidence learned)" in out
    assert any(line in out for line in spelt("reason:   learned {day}: HTTP 400 refused")), out


@pytest.mark.parametrize("spelling", [" OpenRouter ", "openrouter", "OPENROUTER\t"])
def test_a_learned_route_is_found_and_forgotten_however_the_provider_is_spelt(
    tmp_path: Path, spelling: str
) -> None:
    # Regression (issue 29): recording stripped the provider, finding only lower-cased it,
    # so a route recorded for " OpenRouter " was not found under the same spelling.
    overlay = RouteOverlay(tmp_path / "routes.json")
    overlay.record(LearnedRoute.today(spelling, " Vendor/Model ", "refuses", "learned", "400"))
    assert overlay.find(spelling, "vendor/model ") is not None
    assert overlay.find("openrouter", "VENDOR/MODEL") is not None
    assert overlay.forget(spelling, "Vendor/Model") is True
    assert overlay.entries() == ()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_routes_file_that_turns_into_a_fifo_counts_as_empty_and_never_blocks(
    tmp_path: Path,
) -> None:
    """Regression (issue 36): the overlay read its file with a plain `read_text`, so a FIFO
    put at the path (after the gate loaded) blocked the next decision for ever."""
    routes = tmp_path / "routes.json"
    gate = Gate.load(routes=routes)
    gate.report_refusal("openrouter", "a/b", "HTTP 400")
    assert gate.decide("openrouter", "a/b").facts["path"] == "refuses"
    routes.unlink()
    os.mkfifo(routes)
    gate.resolver.routes._checked = float("-inf")  # the next look, without waiting a second
    decided: list[Decision] = []
    deciding = threading.Thread(target=lambda: decided.append(gate.decide("openrouter", "a/b")))
    deciding.daemon = True
    deciding.start()
    deciding.join(10)
    if deciding.is_alive():  # a blocking open waits for a writer: be one, so it ends
        os.close(os.open(routes, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("a decision waited 10 s on a FIFO at the routes path")
    (decision,) = decided
    assert decision.facts["path"] == "unverified"
    said = "cannot be read as a routes file: not a regular file (a FIFO)"
    assert any(said in warning for warning in decision.warnings), decision.warnings
