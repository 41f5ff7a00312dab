"""Local runtimes asked, not guessed: Ollama's `/api/show` and llama.cpp's `/props` on
loopback stand-ins shaped as their docs show (`tests/_local_runtimes.py`)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from _local_runtimes import Runtime, llamacpp, ollama
from _routing_helpers import loopback_server, without_proxies

from visiongate.engine import Gate
from visiongate.engine.facts._catalog import ModelCatalog
from visiongate.engine.facts._resolver import FactResolver
from visiongate.engine.facts._runtimes import DEADLINE, RuntimeProbe, ollama_host, runtime_root
from visiongate.engine.facts.config._config import AgentConfig
from visiongate.engine.facts.registry._registry import ProviderRegistry


@pytest.fixture(scope="module")
def server() -> Iterator[Runtime]:
    with without_proxies(), ollama() as running:
        yield running


def resolver(config: dict[str, Any], tmp_path: Path, **probe: Any) -> FactResolver:
    runtimes = RuntimeProbe(tmp_path / "runtimes.json", **probe)
    return FactResolver(
        AgentConfig.from_mapping(config),
        ModelCatalog.bundled(),
        ProviderRegistry.bundled(),
        runtimes=runtimes,
    )


def at(url: str, provider: str = "ollama") -> dict[str, Any]:
    return {"model": {"provider": provider, "base_url": url}}


@pytest.mark.parametrize(
    ("model", "catalog", "lane"),
    [
        ("llava", "vision", "native"),
        ("llama3.2-vision", "vision", "native"),
        ("qwen2.5vl:7b", "vision", "native"),
        ("llama3.2", "no_vision", "text"),
        ("nomic-embed-text", "no_vision", "text"),
    ],
)
def test_ollama_is_asked_what_the_model_reads(
    server: Runtime, tmp_path: Path, model: str, catalog: str, lane: str
) -> None:
    gate = Gate.load(config=at(server.url), routes=False)
    gate.resolver.runtimes = RuntimeProbe(tmp_path / "runtimes.json")
    decision = gate.decide("ollama", model)
    assert (decision.facts["catalog"], decision.lane) == (catalog, lane)
    provenance = decision.record()["provenance"]["catalog"]
    assert provenance.startswith("probed ollama /api/show 20") and f"at {server.url}" in provenance
    assert f": {catalog} (capabilities: " in provenance


def test_the_openai_compatible_base_url_asks_the_same_server(
    server: Runtime, tmp_path: Path
) -> None:
    facts = resolver(at(f"{server.url}/v1/"), tmp_path).resolve("ollama", "llava")
    assert facts.route.provider == "ollama-openai" and facts.route.api == "openai-chat"
    assert facts.facts["catalog"] == "vision"


def test_ollama_host_is_the_default_base_url(
    server: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"0.0.0.0:{server.port}")
    facts = resolver({}, tmp_path).resolve("ollama", "gemma3:27b")
    assert facts.facts["catalog"] == "vision"
    assert f"at http://127.0.0.1:{server.port}:" in facts.provenance["catalog"]


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("", "http://127.0.0.1:11434"),
        ("0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("http://gpu-box:8000", "http://gpu-box:8000"),
        ("http://localhost", "http://localhost:80"),
        ("https://ollama.example.org", "https://ollama.example.org:443"),
        ("gpu-box", "http://gpu-box:11434"),
        (' "127.0.0.1:9999" ', "http://127.0.0.1:9999"),
        ("[::1]:11434", "http://[::1]:11434"),
        ("::", "http://[::1]:11434"),
        ("127.0.0.1:99999", "http://127.0.0.1:11434"),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it(value: str, url: str) -> None:
    assert ollama_host(value) == url


def test_a_model_the_runtime_does_not_have_is_unknown(server: Runtime, tmp_path: Path) -> None:
    facts = resolver(at(server.url), tmp_path).resolve("ollama", "mystery:1b")
    assert facts.facts["catalog"] == "unknown"
    assert "ollama has no model `mystery:1b`" in facts.provenance["catalog"]


def test_a_dead_runtime_is_unknown_and_says_so(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]  # bound, not listening: connections are refused
        started = time.monotonic()
        facts = resolver(at(f"http://127.0.0.1:{port}"), tmp_path).resolve("ollama", "llava")
    assert time.monotonic() - started < DEADLINE + 0.5
    assert facts.facts["catalog"] == "unknown"
    assert facts.provenance["catalog"].startswith(
        f"ollama at http://127.0.0.1:{port} gave no answer"
    )


def test_a_slow_runtime_costs_no_more_than_the_deadline(server: Runtime, tmp_path: Path) -> None:
    deciding = resolver(at(server.url), tmp_path, deadline=0.3)
    started = time.monotonic()
    facts = deciding.resolve("ollama", "slow-model")
    assert time.monotonic() - started < 0.3 + 0.4
    assert facts.facts["catalog"] == "unknown"
    assert "no complete answer within 0.3 s" in facts.provenance["catalog"]


def test_answers_are_cached_in_the_process_and_on_disk(server: Runtime, tmp_path: Path) -> None:
    server.asked.clear()
    first = resolver(at(server.url), tmp_path)
    first.resolve("ollama", "llava")
    first.forget()
    first.resolve("ollama", "llava")
    assert server.asked == ["llava"]
    again = resolver(at(server.url), tmp_path)  # a new process: the disk cache answers
    assert again.resolve("ollama", "llava").facts["catalog"] == "vision"
    assert server.asked == ["llava"]
    later = resolver(at(server.url), tmp_path, clock=lambda: time.time() + 2 * 24 * 3600)
    later.resolve("ollama", "llava")  # past the TTL: asked again
    assert server.asked == ["llava", "llava"]


def test_an_unknown_answer_is_asked_again_after_the_retry_time(tmp_path: Path) -> None:
    now = [1_000_000.0]
    probe = RuntimeProbe(None, clock=lambda: now[0], retry=60)
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens
    first = probe.ask("ollama", dead, "llava")
    assert first.verdict == "unknown" and probe.ask("ollama", dead, "llava") is first
    now[0] += 61
    assert probe.ask("ollama", dead, "llava") is not first


@pytest.mark.parametrize(("vision", "catalog"), [(True, "vision"), (False, "no_vision")])
def test_llamacpp_props_say_what_the_server_reads(
    tmp_path: Path, vision: bool, catalog: str
) -> None:
    with without_proxies(), llamacpp(vision=vision) as server:
        facts = resolver(at(f"{server.url}/v1", "llamacpp"), tmp_path).resolve("llamacpp", "local")
    assert facts.facts["catalog"] == catalog
    assert facts.provenance["catalog"].startswith("probed llamacpp /props 20")
    assert f"modalities.vision: {str(vision).lower()}" in facts.provenance["catalog"]
    assert server.asked == ["/props"]


def test_a_slow_llamacpp_server_is_unknown_within_the_deadline(tmp_path: Path) -> None:
    with without_proxies(), llamacpp(slow=True) as server:
        started = time.monotonic()
        deciding = resolver(at(server.url, "llamacpp"), tmp_path, deadline=0.3)
        facts = deciding.resolve("llamacpp", "local")
        assert time.monotonic() - started < 0.7
    assert facts.facts["catalog"] == "unknown"


def test_a_config_declaration_is_not_second_guessed_by_the_runtime(
    server: Runtime, tmp_path: Path
) -> None:
    server.asked.clear()
    config = {
        **at(server.url),
        "providers": {"ollama": {"models": {"llama3.2": {"supports_vision": True}}}},
    }
    facts = resolver(config, tmp_path).resolve("ollama", "llama3.2")
    assert facts.facts["catalog"] == "vision" and server.asked == []


@pytest.mark.parametrize(
    ("url", "root"),
    [
        ("http://localhost:11434/v1/", "http://localhost:11434"),
        ("http://0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
    ],
)
def test_a_configured_base_url_is_the_runtime_root(url: str, root: str) -> None:
    assert runtime_root(url) == root


DEEP = b"[" * 100_000 + b"]" * 100_000
"""An answer nested 100,000 deep (issue 36, item 7)."""


class _DeepAnswers(BaseHTTPRequestHandler):
    """`/props` and `/api/show` answer 200 with JSON nested 100,000 deep; `/shallow/...` 65."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._deep()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._deep()

    def _deep(self) -> None:
        body = DEEP if not self.path.startswith("/shallow") else b"[" * 65 + b"]" * 65
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("runtime", ["ollama", "llamacpp"])
def test_a_runtime_answering_deep_json_is_unknown_in_one_line_and_decisions_go_on(
    tmp_path: Path, runtime: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Regression: `/props` or `/api/show` nested 100,000 deep raised a RecursionError in
    `decide` (exit 1, a traceback), and every proxied call then failed."""
    from visiongate.cli import main

    with without_proxies(), loopback_server(_DeepAnswers) as port:
        url = f"http://127.0.0.1:{port}"
        # A deadline no load reaches: the answer itself must be what is refused.
        facts = resolver(at(url, runtime), tmp_path, deadline=10).resolve(runtime, "local")
        assert facts.facts["catalog"] == "unknown"
        assert "answered JSON nested deeper than 64 levels" in facts.provenance["catalog"]
        shallow = resolver(at(f"{url}/shallow", runtime), tmp_path / "2", deadline=10).resolve(
            runtime, "m"
        )
        assert "nested deeper than 64" in shallow.provenance["catalog"]
        config = tmp_path / "agent.yaml"
        config.write_text(f"model:\n  provider: {runtime}\n  base_url: {url}\n")
        code = main(["decide", "--config", str(config), "--provider", runtime, "--model", "m"])
    captured = capsys.readouterr()
    assert code == 0 and "lane:    text" in captured.out
    assert "Traceback" not in captured.err and "RecursionError" not in captured.err


def test_a_deep_runtime_cache_file_is_no_cache(tmp_path: Path) -> None:
    cache = tmp_path / "runtimes.json"
    cache.write_bytes(b'{"schema_version": 1, "answers": ' + DEEP + b"}")
    probe = RuntimeProbe(cache)
    assert probe.ask("ollama", "http://127.0.0.1:9", "llava").verdict == "unknown"


# A local server behind `provider: custom`, `custom:<name>` or a `custom_providers` entry
# with a loopback or private `base_url` is asked (issue 35); the production agent asks
# llama.cpp's `GET /props` there (#135837) and sends pixels when it says vision.

LISTED = {
    "data": [
        {"id": "qwen2-vl-7b-instruct", "object": "model", "type": "vlm"},  # LM Studio
        {"id": "llama-3.1-8b-instruct", "object": "model", "type": "llm"},
        {"id": "Qwen/Qwen2.5-VL-7B", "object": "model", "input_modalities": ["text", "image"]},
        {"id": "plain", "object": "model", "owned_by": "vllm"},  # vLLM: states nothing
    ]
}


class _ModelList(BaseHTTPRequestHandler):
    """An OpenAI-compatible server: `GET /v1/models` only (what vLLM and LM Studio serve)."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        from _local_runtimes import send_json

        if self.path != "/v1/models":
            return send_json(self, 404, {"error": "not found"})
        send_json(self, 200, LISTED)

    def do_POST(self) -> None:
        from _local_runtimes import send_json

        send_json(self, 404, {"error": "not found"})


def test_provider_custom_with_a_loopback_base_url_asks_llamacpp_props(tmp_path: Path) -> None:
    """Regression: `model.provider: custom` at a local llama.cpp was never asked, so its
    screenshots stayed on text (the provider refused as unknown)."""
    with without_proxies(), llamacpp() as server:
        config = {"model": {"provider": "custom", "base_url": f"{server.url}/v1"}}
        facts = resolver(config, tmp_path).resolve("custom", "local")
    assert facts.facts["catalog"] == "vision" and facts.facts["path"] == "unverified"
    assert facts.provenance["catalog"].startswith("probed local /props 20")
    assert server.asked == ["/props"]


def test_a_custom_providers_entry_at_a_local_ollama_asks_api_show(
    server: Runtime, tmp_path: Path
) -> None:
    config = {"custom_providers": [{"name": "my-ollama", "base_url": f"{server.url}/v1"}]}
    deciding = resolver(config, tmp_path)
    sees = deciding.resolve("custom:my-ollama", "llava")
    blind = deciding.resolve("my-ollama", "llama3.2")
    assert (sees.facts["catalog"], sees.facts["path"]) == ("vision", "unverified")
    assert "probed local /api/show" in sees.provenance["catalog"]
    assert (blind.facts["catalog"], blind.facts["path"]) == ("no_vision", "refuses")


@pytest.mark.parametrize(
    ("model", "catalog"),
    [
        ("qwen2-vl-7b-instruct", "vision"),
        ("llama-3.1-8b-instruct", "no_vision"),
        ("Qwen/Qwen2.5-VL-7B", "vision"),
        ("plain", "unknown"),
    ],
)
def test_an_openai_compatible_server_answers_where_its_model_list_states_modalities(
    tmp_path: Path, model: str, catalog: str
) -> None:
    with without_proxies(), loopback_server(_ModelList) as port:
        config = {"providers": {"lab": {"base_url": f"http://127.0.0.1:{port}/v1"}}}
        facts = resolver(config, tmp_path).resolve("lab", model)
    assert facts.facts["catalog"] == catalog, facts.provenance["catalog"]
    if catalog != "unknown":
        assert "probed local /v1/models" in facts.provenance["catalog"]


def test_a_public_base_url_is_never_asked(tmp_path: Path) -> None:
    config = {"providers": {"lab": {"base_url": "https://llm.example.com/v1"}}}
    facts = resolver(config, tmp_path).resolve("lab", "m")
    assert "probed" not in facts.provenance["catalog"]
    assert "gave no answer" not in facts.provenance["catalog"]


@pytest.mark.parametrize(
    ("url", "private"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:1234", True),
        ("http://10.0.0.7:8000/v1", True),
        ("http://192.168.1.20:11434", True),
        ("http://[::1]:8080", True),
        ("http://[fd00::5]:8080", True),
        ("https://api.openai.com/v1", False),
        ("http://my-gpu-box.lan:8080", False),  # a name is never resolved
        ("http://8.8.8.8/v1", False),
    ],
)
def test_which_base_urls_are_local_or_private(url: str, private: bool) -> None:
    from visiongate.engine.facts._runtimes import is_private_url

    assert is_private_url(url) is private


def test_the_three_questions_share_one_deadline(tmp_path: Path) -> None:
    with without_proxies(), llamacpp(slow=True) as server:
        config = {"model": {"provider": "custom", "base_url": server.url}}
        started = time.monotonic()
        facts = resolver(config, tmp_path, deadline=0.4).resolve("custom", "local")
        assert time.monotonic() - started < 0.4 + 0.4
    assert facts.facts["catalog"] == "unknown"
