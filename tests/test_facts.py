"""Fact resolution from an agent config, the model catalog and the provider registry.

The cases are data: `tests/data/facts/{mode,aux,catalog,path,routes,embed}.yaml`.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.engine import PolicyError
from visiongate.engine._vocabulary import FACTS
from visiongate.engine.facts._catalog import ModelCatalog
from visiongate.engine.facts._resolver import FactResolver, ResolvedFacts
from visiongate.engine.facts.config._config import AgentConfig, coerce_bool
from visiongate.engine.facts.registry._registry import ProviderRegistry

DATA = Path(__file__).parent / "data" / "facts"
REGISTRY_TEXT = (Path(__file__).parent.parent / "policies" / "providers.yaml").read_text("utf-8")
CASE_FILES = ("mode", "aux", "catalog", "path", "routes", "embed")
DEFAULT_PROVIDER = "openrouter"
DEFAULT_MODEL = "deepseek/deepseek-v3.2"


def _cases() -> list[Any]:
    found = []
    for name in CASE_FILES:
        for case in yaml.safe_load((DATA / f"{name}.yaml").read_text("utf-8"))["cases"]:
            found.append(pytest.param(case, id=f"{name}: {case['name']}"))
    return found


def _config(case: dict[str, Any]) -> AgentConfig:
    if "config_text" in case:
        return AgentConfig.from_text(case["config_text"], "cfg.yaml")
    return AgentConfig.from_mapping(case.get("config", {}))


def _resolve(
    config: AgentConfig, provider: str, model: str, registry: ProviderRegistry | None = None
) -> ResolvedFacts:
    registry = registry or ProviderRegistry.bundled()
    return FactResolver(config, ModelCatalog.bundled(), registry).resolve(provider, model)


@pytest.mark.parametrize("case", _cases())
def test_resolution(case: dict[str, Any]) -> None:
    provider = case.get("provider", DEFAULT_PROVIDER)
    resolved = _resolve(_config(case), provider, case.get("model", DEFAULT_MODEL))
    for fact, value in case.get("want", {}).items():
        assert resolved.facts[fact] == value, (fact, dict(resolved.provenance))
    provenance = {**resolved.provenance, "embed_target_bytes": resolved.embed_target_provenance}
    for fact, text in case.get("want_provenance", {}).items():
        assert text in provenance[fact], provenance[fact]
    for fact, text in case.get("want_provenance_not", {}).items():
        assert text not in provenance[fact], provenance[fact]
    if "want_warnings" in case:
        _check_warnings(resolved.warnings, case["want_warnings"])
    if "want_embed_target_bytes" in case:
        assert resolved.embed_target_bytes == case["want_embed_target_bytes"]
    for name, value in case.get("want_route", {}).items():
        got = getattr(resolved.route, name)
        want = _registry_lines(value, REGISTRY_TEXT) if isinstance(value, str) else value
        assert (list(got) if isinstance(got, tuple) else got) == want, (name, resolved.route)


def _registry_lines(text: str, registry: str) -> str:
    """`text` with each `{line of a.b}` replaced by the line of key `a.b` in `registry`."""
    return re.sub(r"\{line of ([\w.-]+)\}", lambda m: str(_key_line(m.group(1), registry)), text)


@cache
def _key_line(dotted: str, registry: str) -> int:
    """The 1-based line of the key at `dotted` (`providers.openrouter`) in `registry`."""
    node: yaml.Node = yaml.compose(registry)
    line = 0
    for part in dotted.split("."):
        assert isinstance(node, yaml.MappingNode), dotted
        key, node = next((k, v) for k, v in node.value if k.value == part)
        line = key.start_mark.line + 1
    return line


_LOCATED = [
    pytest.param(case, id=case["name"])
    for case in yaml.safe_load((DATA / "path.yaml").read_text("utf-8"))["cases"]
    if "where" in case.get("want_route", {})
]
_ADDED_FIRST = """  a-host-added-first:
    api: openai-chat
    tool_result_images: false
    evidence: assumed
    note: an entry added above every other, as the registry grows
"""


@pytest.mark.parametrize("case", _LOCATED)
def test_a_located_route_expectation_follows_the_registry_as_it_grows(
    case: dict[str, Any],
) -> None:
    # The expectation names the entry, not a line: the registry grows between releases.
    grown = REGISTRY_TEXT.replace("\nproviders:\n", "\nproviders:\n" + _ADDED_FIRST, 1)
    assert grown != REGISTRY_TEXT
    registry = ProviderRegistry.from_text(grown, "providers.yaml")
    resolved = _resolve(_config(case), case["provider"], case["model"], registry)
    want = _registry_lines(case["want_route"]["where"], grown)
    assert want != _registry_lines(case["want_route"]["where"], REGISTRY_TEXT)  # it moved
    assert resolved.route.where == want


def _check_warnings(warnings: tuple[str, ...], wanted: list[str]) -> None:
    if not wanted:
        assert warnings == ()
    for text in wanted:
        assert any(text in warning for warning in warnings), (text, warnings)


def test_every_resolution_is_a_cell_of_the_vocabulary() -> None:
    resolved = _resolve(AgentConfig.empty(), "anthropic", "claude-sonnet-4-5")
    assert resolved.cell == tuple(resolved.facts[fact] for fact in FACTS)
    assert all(resolved.facts[fact] in domain for fact, domain in FACTS.items())
    assert set(resolved.provenance) == set(FACTS)


def test_resolution_is_memoized_per_provider_and_model() -> None:
    resolver = FactResolver(AgentConfig.empty(), ModelCatalog.bundled(), ProviderRegistry.bundled())
    first = resolver.resolve("anthropic", "claude-sonnet-4-5")
    assert resolver.resolve("anthropic", "claude-sonnet-4-5") is first
    assert resolver.resolve("openrouter", "claude-sonnet-4-5") is not first


def test_the_memo_is_bounded_and_drops_the_oldest_entry() -> None:
    resolver = FactResolver(
        AgentConfig.empty(), ModelCatalog.bundled(), ProviderRegistry.bundled(), memo_size=2
    )
    first = resolver.resolve("anthropic", "a")
    resolver.resolve("anthropic", "b")
    resolver.resolve("anthropic", "c")
    assert resolver.resolve("anthropic", "c") is resolver.resolve("anthropic", "c")
    assert resolver.resolve("anthropic", "a") is not first
    assert resolver.resolve("anthropic", "a") == first


def test_config_from_file_keeps_the_raw_mapping(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  image_input_mode: text\nauxiliary:\n  vision:\n    provider: main\n")
    config = AgentConfig.from_file(path)
    assert config.mode.value == "text"
    assert config.aux.value == "set"
    assert config.raw["auxiliary"] == {"vision": {"provider": "main"}}
    assert config.label == "config.yaml"


@pytest.mark.parametrize(
    ("text", "code", "where"),
    [
        ("agent:\n  image_input_mode: [native\n", "yaml-syntax", "bad.yaml:3:1"),
        ("agent: 1\nagent: 2\n", "duplicate-key", "bad.yaml:2:1"),
        ("- native\n", "config-not-mapping", "bad.yaml:1:1"),
        ("just a string\n", "config-not-mapping", "bad.yaml:1:1"),
    ],
)
def test_an_unusable_config_file_is_an_error_with_its_location(
    text: str, code: str, where: str
) -> None:
    with pytest.raises(PolicyError) as raised:
        AgentConfig.from_text(text, "bad.yaml")
    assert raised.value.diagnostics[0].code == code
    assert str(raised.value.diagnostics[0].location) == where


@pytest.mark.parametrize("text", ["", "# only a comment\n", "null\n"])
def test_an_empty_config_file_is_the_empty_config(text: str) -> None:
    config = AgentConfig.from_text(text, "empty.yaml")
    assert config.mode.value == "auto"
    assert config.diagnostics == ()


def test_a_config_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(PolicyError, match="must be a mapping"):
        AgentConfig.from_mapping(["agent"])  # type: ignore[arg-type]


def test_an_unreadable_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        AgentConfig.from_file(tmp_path / "missing.yaml")


def test_an_invalid_mode_is_a_located_error_that_fails_closed() -> None:
    config = AgentConfig.from_text("agent:\n  image_input_mode: nativ\n", "cfg.yaml")
    (diagnostic,) = config.diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("invalid-mode", "error")
    assert config.errors == (diagnostic,)
    assert diagnostic.document_path == ("agent", "image_input_mode")
    assert str(diagnostic.location) == "cfg.yaml:2:21"
    assert config.warnings == (
        "error: cfg.yaml:2:21: `nativ` is not an image input mode, failing closed to `text`; "
        "did you mean `native`?",
    )
    assert config.mode.value == "text"


@pytest.mark.parametrize(
    "word",
    ["txet", "nativ", "Native!", "auto-ish", "yes", "on", "1", "", "NATIVE mode", "[native]"],
)
def test_an_invalid_mode_never_yields_the_native_lane(word: str) -> None:
    """Regression: `image_input_mode: txet` fell back to `auto`, so a vision model got pixels."""
    text = f"agent:\n  image_input_mode: {word or '{}'}\n"
    gate_config = AgentConfig.from_text(text, "cfg.yaml")
    resolver = FactResolver(gate_config, ModelCatalog.bundled(), ProviderRegistry.bundled())
    facts = resolver.resolve("anthropic", "claude-sonnet-4-5").facts
    assert facts["mode"] == "text", (word, gate_config.mode)


def test_near_misses_of_keys_visiongate_reads_are_reported_with_a_suggestion() -> None:
    text = (
        "agent: {image_input_mode: auto, max_turns: 90}\n"
        "auxiliary:\n  vison: {provider: openrouter}\n  compression: {model: x}\n"
        "vision: {embed_taget_bytes: 100000}\n"
        "model: {default: m, suports_vision: true}\n"
        "providers:\n  my-proxy: {tool_result_image: true, api_key: k}\n"
        "visiongate: {routes: x.json}\n"
    )
    config = AgentConfig.from_text(text, "cfg.yaml")
    found = {(d.document_path, d.help) for d in config.diagnostics}
    assert found == {
        (("auxiliary", "vison"), "did you mean `vision`?"),
        (("vision", "embed_taget_bytes"), "did you mean `embed_target_bytes`?"),
        (("model", "suports_vision"), "did you mean `supports_vision`?"),
        (("providers", "my-proxy", "tool_result_image"), "did you mean `tool_result_images`?"),
        (("visiongate", "routes"), "did you mean `routes_file`?"),
    }
    # Issue 35: a near miss of a key that routes images is an error (the config fails closed);
    # one of a key that only tunes, or in visiongate's own section, stays a warning.
    severities = {d.document_path[-1]: d.severity for d in config.diagnostics}
    assert severities == {
        "vison": "error",
        "suports_vision": "error",
        "tool_result_image": "error",
        "embed_taget_bytes": "warning",
        "routes": "warning",
    }
    resolver = FactResolver(config, ModelCatalog.bundled(), ProviderRegistry.bundled())
    warnings = resolver.resolve("anthropic", "claude-sonnet-4-5").warnings
    assert any(
        "cfg.yaml:3:3: unknown key `vison` under `auxiliary` looks like `vision`" in w
        for w in warnings
    )
    assert not any("tool_result_image`" in w for w in warnings)  # another provider's entry
    mine = resolver.resolve("my-proxy", "m").warnings
    assert any("unknown key `tool_result_image` under `providers.my-proxy`" in w for w in mine)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (True, True), (False, False), (1, True), (0, False), (2, None), (-1, None),
        ("true", True), ("YES", True), (" on ", True), ("1", True),
        ("false", False), ("No", False), ("OFF", False), ("0", False),
        ("", None), ("maybe", None), ("y", None), (1.0, None), (None, None), ([], None),
    ],
)  # fmt: skip
def test_coerce_bool_takes_only_the_documented_spellings(raw: Any, expected: bool | None) -> None:
    assert coerce_bool(raw) is expected
