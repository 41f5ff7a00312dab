"""The living catalog: `visiongate catalog update` against loopback servers, the gate's choice
of the newest valid catalog, and no network on the decide path."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from _routing_helpers import loopback_server, without_proxies

from visiongate.cli import main
from visiongate.engine import Gate, PolicyError
from visiongate.engine.facts._catalog import ModelCatalog
from visiongate.engine.facts._catalog_store import current_catalog, refreshed_path

ROOT = Path(__file__).parent.parent
BUNDLED = json.loads((ROOT / "policies" / "catalog" / "models-dev.json").read_text("utf-8"))
NEW_MODEL = "claude-sonnet-9"


def catalog_with_a_new_model() -> bytes:
    document = json.loads(json.dumps(BUNDLED))
    document["_source"] = "models.dev (MIT) at 0123456789abcdef0123456789abcdef01234567 2026-11-30"
    document["anthropic"]["models"][NEW_MODEL] = {
        "id": NEW_MODEL,
        "name": "Claude Sonnet 9",
        "attachment": True,
        "tool_call": True,
        "modalities": {"input": ["text", "image"], "output": ["text"]},
        "limit": {"context": 1000000, "output": 64000},
    }
    return json.dumps(document).encode()


def catalog_that_changes_vision() -> bytes:
    """The bundled catalog where `anthropic/claude-sonnet-4-5` lost image input, `openai/gpt-4o`
    is gone, and one model id carries a terminal escape (issue 36, item 8)."""
    document = json.loads(catalog_with_a_new_model())
    document["anthropic"]["models"]["claude-sonnet-4-5"]["modalities"]["input"] = ["text"]
    del document["openai"]["models"]["gpt-4o"]
    document["anthropic"]["models"][ESCAPED] = {
        "id": ESCAPED,
        "modalities": {"input": ["text"], "output": ["text"]},
    }
    return json.dumps(document).encode()


def catalog_of_one_provider() -> bytes:
    """A mirror that serves one provider of the 147 (issue 35)."""
    document = json.loads(catalog_with_a_new_model())
    return json.dumps({"anthropic": document["anthropic"]}).encode()


ESCAPED = "evil\x1b]0;owned\x07\x1b[2J-model"
DEEP = b"[" * 100_000 + b"]" * 100_000


class Catalogs(BaseHTTPRequestHandler):
    """`/good` a catalog with one model more; `/hang` never answers; `/huge` claims 50 MB;
    `/endless` streams without a length; `/shape` is JSON of the wrong shape; `/html` is not
    JSON; `/500` fails; `/changed` changes a model's vision; `/one` serves one provider;
    `/deep` is JSON nested 100,000 deep."""

    good = catalog_with_a_new_model()
    changed = catalog_that_changes_vision()
    one = catalog_of_one_provider()

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/hang":
            time.sleep(30)
            return
        if self.path == "/huge":
            self._head(200, 50 * 1024 * 1024)
            self._drip(50 * 1024 * 1024)
            return
        if self.path == "/endless":
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self._drip(50 * 1024 * 1024)
            return
        bodies = {
            "/good": (200, self.good),
            "/changed": (200, self.changed),
            "/one": (200, self.one),
            "/deep": (200, DEEP),
            "/shape": (200, b'{"anthropic": {"models": {"x": {"name": "no modalities"}}}}'),
            "/html": (200, b"<html>not json</html>"),
            "/500": (500, b"{}"),
        }
        status, body = bodies.get(self.path, (404, b""))
        self._head(status, len(body))
        self.wfile.write(body)

    def _head(self, status: int, length: int) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(length))
        self.end_headers()

    def _drip(self, total: int) -> None:
        chunk = b" " * 65536
        try:
            for _ in range(total // len(chunk)):
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with without_proxies(), loopback_server(Catalogs) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VISIONGATE_FACTS_CACHE", str(tmp_path / "facts"))
    return tmp_path / "facts"


def decide_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["decide", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_update_brings_a_new_model_that_then_decides_native(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = decide_json(capsys, "--provider", "anthropic", "--model", NEW_MODEL)
    assert (before["lane"], before["facts"]["catalog"]) == ("text", "unknown")
    assert main(["catalog", "update", "--url", f"{server}/good"]) == 0
    out = capsys.readouterr().out
    assert "1 new" in out and f"anthropic/{NEW_MODEL}" in out
    after = decide_json(capsys, "--provider", "anthropic", "--model", NEW_MODEL)
    assert (after["lane"], after["facts"]["catalog"]) == ("native", "vision")
    assert after["provenance"]["catalog"].startswith("models.dev fetched 20")
    assert "from 127.0.0.1:" in after["provenance"]["catalog"]
    assert main(["catalog", "show", "anthropic", NEW_MODEL]) == 0
    assert "(refreshed)" in capsys.readouterr().out


def test_the_catalog_url_comes_from_the_environment_when_not_given(
    server: str, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VISIONGATE_CATALOG_URL", f"{server}/good")
    assert main(["catalog", "update", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["url"] == f"{server}/good" and report["new_models"] == [f"anthropic/{NEW_MODEL}"]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/hang", "gave no complete answer within 1 s"),
        ("/huge", "sent more than 32 MiB"),
        ("/endless", "sent more than 32 MiB"),
        ("/shape", "is not a models.dev catalog: model `anthropic/x` has no `modalities.input`"),
        ("/html", "did not answer with JSON"),
        ("/500", "answered HTTP 500"),
        ("/deep", "answered JSON nested deeper than 64 levels, which no catalog needs"),
        ("/one", "is refused: it lists 1 of the 147 providers and drops"),
    ],
)
def test_a_bad_fetch_keeps_the_catalog_in_use_says_why_in_one_line_and_exits_2(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str], path: str, says: str
) -> None:
    assert main(["catalog", "update", "--url", f"{server}/good"]) == 0
    stored = refreshed_path().read_bytes()
    in_use = current_catalog().label
    capsys.readouterr()
    started = time.monotonic()
    assert main(["catalog", "update", "--url", f"{server}{path}", "--timeout", "1"]) == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert says in err and f"still using {in_use}" in err
    assert refreshed_path().read_bytes() == stored
    assert NEW_MODEL in {name for name, _ in current_catalog().section("anthropic")}


def test_the_gate_uses_the_newest_valid_of_bundled_and_refreshed(cache: Path) -> None:
    assert current_catalog() is ModelCatalog.bundled()  # nothing refreshed yet
    path = refreshed_path()
    path.parent.mkdir(parents=True)
    document = json.loads(catalog_with_a_new_model())
    document["_fetched"] = {"date": "2026-01-01T00:00:00Z", "url": "https://models.dev/api.json"}
    from visiongate.engine.facts._catalog_snapshot import snapshot_text

    path.write_text(snapshot_text(document))
    assert current_catalog() is ModelCatalog.bundled()  # older than the bundled snapshot
    document["_fetched"]["date"] = "2026-12-01T00:00:00Z"
    path.write_text(snapshot_text(document))
    refreshed = current_catalog()
    assert (refreshed.origin, refreshed.date) == ("refreshed", "2026-12-01")
    assert refreshed.label == "models.dev fetched 2026-12-01 from models.dev/api.json"
    path.write_text(snapshot_text(document).replace('"modalities"', '"modality"', 1))
    assert current_catalog() is ModelCatalog.bundled()  # newer but not valid


def test_decide_makes_no_network_access(
    server: str, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "update", "--url", f"{server}/good"]) == 0
    monkeypatch.setenv("VISIONGATE_CATALOG_URL", f"{server}/good")
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("no network on the decide path")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    gate = Gate.load(routes=False)
    for provider, model in [
        ("anthropic", NEW_MODEL),
        ("openrouter", "x/never-seen"),
        ("xai", "grok-4"),
    ]:
        gate.decide(provider, model)
    assert gate.decide("anthropic", NEW_MODEL).lane == "native"
    assert decide_json(capsys, "--provider", "openai", "--model", "gpt-4o")["lane"] == "native"
    assert attempts == []


def test_a_background_refresh_swaps_the_catalog_without_blocking_decisions(
    server: str, cache: Path
) -> None:
    from visiongate.engine.facts._catalog_store import CatalogRefresher

    gate = Gate.load(routes=False)
    assert gate.decide("anthropic", NEW_MODEL).lane == "text"
    hanging = CatalogRefresher(gate.resolver, ttl=0, deadline=2, url=f"{server}/hang")
    hanging.start()
    started = time.monotonic()
    for _ in range(200):
        gate.decide("openrouter", f"x/{_}")  # a fetch in flight costs a decision nothing
    assert time.monotonic() - started < 1
    hanging.stop()
    refresher = CatalogRefresher(gate.resolver, ttl=3600, url=f"{server}/good")
    refresher.start()
    deadline = time.monotonic() + 10
    while gate.resolver.catalog.origin != "refreshed" and time.monotonic() < deadline:
        time.sleep(0.05)
    refresher.stop()
    assert gate.resolver.catalog.origin == "refreshed"
    assert gate.decide("anthropic", NEW_MODEL).lane == "native"
    assert refresher.wait_time() > 3000  # fresh: the next look is a TTL away


def test_a_failed_refresh_keeps_the_catalog_and_backs_off(server: str, cache: Path) -> None:
    from visiongate.engine.facts._catalog_store import CatalogRefresher

    gate = Gate.load(routes=False)
    before = gate.resolver.catalog
    refresher = CatalogRefresher(gate.resolver, url=f"{server}/500", first_backoff=300)
    assert refresher.wait_time() == 0  # never refreshed: due now
    assert refresher.run_once() is False and refresher.run_once() is False
    assert gate.resolver.catalog is before
    assert refresher.wait_time() == 600 and "HTTP 500" in (refresher.last_error or "")


def test_the_proxy_refreshes_only_when_the_config_asks() -> None:
    from visiongate.engine.facts.config._config import AgentConfig

    assert AgentConfig.from_mapping({"visiongate": {"catalog_refresh": True}}).catalog_refresh
    assert not AgentConfig.from_mapping({}).catalog_refresh
    typo = AgentConfig.from_mapping({"visiongate": {"catalog_refesh": True}})
    assert not typo.catalog_refresh
    assert any("did you mean `catalog_refresh`?" in warning for warning in typo.warnings)


def test_choosing_the_refreshed_catalog_does_not_load_the_bundled_one(cache: Path) -> None:
    # The CLI's `decide --provider --model` loads one catalog per call, whichever is newer.
    from visiongate.engine.facts import _catalog
    from visiongate.engine.facts._catalog_snapshot import snapshot_text

    document = json.loads(catalog_with_a_new_model())
    document["_fetched"] = {"date": "2026-12-01T00:00:00Z", "url": "https://models.dev/api.json"}
    refreshed_path().parent.mkdir(parents=True)
    refreshed_path().write_text(snapshot_text(document))
    _catalog._bundled_catalog.cache_clear()
    try:
        assert current_catalog().origin == "refreshed"
        assert _catalog._bundled_catalog.cache_info().currsize == 0
    finally:
        ModelCatalog.bundled()


def test_the_catalog_commands_json_follows_their_schemas(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from _cli_helpers import validate_output

    capsys.readouterr()
    assert main(["catalog", "update", "--url", f"{server}/good", "--json"]) == 0
    validate_output("catalog-update", json.loads(capsys.readouterr().out))
    for argv in (["anthropic"], ["anthropic", NEW_MODEL], ["openruter"]):
        main(["catalog", "show", *argv, "--json"])
        validate_output("catalog-show", json.loads(capsys.readouterr().out))


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ("anthropc", "did you mean `anthropic`?"),
        ("nosuchprovider", "none of its"),
    ],
)
def test_an_unknown_section_gets_a_near_name_never_a_wall_of_all_of_them(
    section: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "show", section]) == 2  # a failed look-up (issue 35)
    err = capsys.readouterr().err
    assert said in err and len(err.splitlines()) == 1
    assert err.count("`") < 12, err  # a hint, not every one of the catalog's sections


def test_an_update_says_per_model_what_changed(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: a refresh that turned a production model from vision to text said nothing;
    only new models were printed."""
    capsys.readouterr()
    assert main(["catalog", "update", "--url", f"{server}/changed"]) == 0
    out = capsys.readouterr().out
    assert "1 vision -> text, 0 text -> vision, 2 new, 1 gone" in out
    assert (
        "  vision -> text: anthropic/claude-sonnet-4-5 (input [text, image, pdf] -> [text])"
    ) in out
    assert "  gone: openai/gpt-4o\n" in out and f"  new: anthropic/{NEW_MODEL}\n" in out
    assert main(["catalog", "update", "--url", f"{server}/good", "--json"]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert {
        "model": "anthropic/claude-sonnet-4-5",
        "change": "text -> vision",
        "before": ["text"],
        "after": ["text", "image", "pdf"],
    } in changes
    regained = next(change for change in changes if change["model"] == "openai/gpt-4o")
    assert regained["change"] == "gained" and regained["before"] is None


def test_a_catalog_that_drops_most_providers_is_refused_unless_accepted(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: a mirror serving one provider replaced all 147 with exit 0."""
    assert main(["catalog", "update", "--url", f"{server}/one"]) == 2
    err = capsys.readouterr().err
    assert "it lists 1 of the 147 providers and drops" in err and "--accept-shrink" in err
    assert not refreshed_path().exists() and current_catalog() is ModelCatalog.bundled()
    assert main(["catalog", "update", "--url", f"{server}/one", "--accept-shrink"]) == 0
    assert current_catalog().providers == frozenset({"anthropic"})


def test_catalog_ids_with_terminal_escapes_are_never_printed_raw(
    server: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 36, item 8): `catalog update` and `catalog show` printed an id's
    escape sequences raw, so a mirror could retitle or clear the operator's terminal."""
    capsys.readouterr()
    assert main(["catalog", "update", "--url", f"{server}/changed"]) == 0
    assert main(["catalog", "show", "anthropic"]) == 0
    main(["catalog", "show", "anthropic", ESCAPED])
    main(["catalog", "update", "--url", f"{server}/changed", "--json"])
    captured = capsys.readouterr()
    assert "\x1b" not in captured.out and "\x07" not in captured.out
    assert "evil\\x1b]0;owned\\x07\\x1b[2J-model" in captured.out


def test_models_dev_url_in_the_agent_config_names_the_catalog(
    server: str, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression (issue 35): the production agent's `models_dev.url` was unread in silence."""
    from visiongate.engine.facts.config._config import AgentConfig

    config = tmp_path / "agent.yaml"
    config.write_text(f"models_dev:\n  url: {server}/good\n")
    assert AgentConfig.from_file(config).catalog_url == f"{server}/good"
    capsys.readouterr()
    assert main(["catalog", "update", "--config", str(config), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["url"] == f"{server}/good"
    assert main(["catalog", "update", "--config", str(config), "--url", f"{server}/500"]) == 2
    config.write_text("models_dev:\n  url: models.internal/api.json\n")
    read = AgentConfig.from_file(config)
    assert read.catalog_url is None
    assert [d.code for d in read.diagnostics] == ["invalid-url"]


def test_a_refreshed_catalog_nested_too_deep_falls_back_to_the_bundled_one(cache: Path) -> None:
    """Issue 36, item 7: a refreshed copy edited to nest 100,000 deep is not a traceback."""
    path = refreshed_path()
    path.parent.mkdir(parents=True)
    fetched = '"_fetched": {"date": "2026-12-01T00:00:00Z", "url": "https://models.dev/api.json"}'
    path.write_bytes(b"{\n" + fetched.encode() + b',\n"deep": ' + DEEP + b"\n}\n")
    assert current_catalog() is ModelCatalog.bundled()
    deep_file = cache / "deep.json"
    deep_file.write_bytes(b'{"anthropic": {"models": {"m": ' + b"[" * 70 + b"]" * 70 + b"}}}")
    with pytest.raises(PolicyError) as raised:
        ModelCatalog.from_file(deep_file)
    assert "the catalog is JSON nested deeper than 64 levels" in str(raised.value.diagnostics[0])
