"""The provider registry: validation with located diagnostics, and routes.

Broken registries are data: `tests/data/facts/registry_errors.yaml`. Routes through the fact
resolver are in `path.yaml`; the tests here call the registry directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.engine import PolicyError
from visiongate.engine.facts.registry._registry import (
    API_NAMES,
    MEDIA_TYPES,
    ProviderOverride,
    ProviderRegistry,
    analyze_registry_text,
)

DATA = yaml.safe_load(
    (Path(__file__).parent / "data" / "facts" / "registry_errors.yaml").read_text("utf-8")
)


def _text(case: dict[str, Any]) -> str:
    if "text" in case:
        return str(case["text"])
    old, new = case["replace"]
    assert old in DATA["base"], f"case {case['name']!r} does not apply to the base registry"
    return str(DATA["base"]).replace(old, new, 1)


@pytest.fixture(scope="module")
def small() -> ProviderRegistry:
    return ProviderRegistry.from_text(DATA["base"], "small.yaml")


def test_the_base_registry_is_valid() -> None:
    registry, diagnostics = analyze_registry_text(DATA["base"], "base.yaml")
    assert registry is not None
    assert diagnostics == []


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda case: case["name"])
def test_a_broken_registry_reports_code_and_location(case: dict[str, Any]) -> None:
    registry, diagnostics = analyze_registry_text(_text(case), "broken.yaml")
    assert registry is None
    matching = [d for d in diagnostics if d.code == case["code"]]
    assert matching, f"expected {case['code']}, got {[d.render() for d in diagnostics]}"
    found = matching[0]
    assert str(found.location) == f"broken.yaml:{case['line']}:{case['column']}", found.render()
    assert case.get("message_contains", "") in found.message
    assert case.get("help_contains", "") in found.help


def test_loading_a_broken_registry_raises_with_every_diagnostic(tmp_path: Path) -> None:
    text = (
        DATA["base"]
        .replace("api: anthropic\n", "api: anthropik\n")
        .replace("tool_result_images: false", "tool_result_image: false")
    )
    path = tmp_path / "providers.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as raised:
        ProviderRegistry.from_file(path)
    codes = {d.code for d in raised.value.diagnostics}
    assert codes == {"unknown-api", "unknown-key", "missing-key"}
    assert f"{path}:14:10" in str(raised.value)


def test_an_unreadable_registry_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        ProviderRegistry.from_file(tmp_path / "missing.yaml")


def test_the_bundled_registry_is_valid_and_loaded_once() -> None:
    registry = ProviderRegistry.bundled()
    assert registry is ProviderRegistry.bundled()
    assert registry.label == "providers.yaml"
    assert set(registry.apis) == set(API_NAMES)
    for limits in registry.apis.values():
        assert set(limits.formats) <= set(MEDIA_TYPES)


def test_every_bundled_provider_says_why() -> None:
    for entry in ProviderRegistry.bundled().entries.values():
        assert entry.note
        assert all(rule.note for rule in entry.rules)


def test_aliases_resolve_to_the_registry_id(small: ProviderRegistry) -> None:
    assert small.canonical(" Claude ") == "anthropic"
    assert small.canonical("anthropic") == "anthropic"
    assert small.canonical("Somebody") == "somebody"
    assert small.route("claude", "x").provider == "anthropic"


def test_model_rules_match_globs_on_the_id_and_its_last_segment(small: ProviderRegistry) -> None:
    assert small.route("gemini", "gemini-3-pro").accepts_tool_images
    assert small.route("gemini", "models/GEMINI-3-pro").accepts_tool_images
    assert not small.route("gemini", "gemini-flash-latest").accepts_tool_images
    assert not small.route("gemini", "my-gemini-3").accepts_tool_images


def test_a_route_carries_the_limits_of_its_api(small: ProviderRegistry) -> None:
    route = small.route("anthropic", "claude-sonnet-4-5")
    assert (route.api, route.formats, route.max_image_base64) == (
        "anthropic",
        ("image/jpeg",),
        5242880,
    )
    assert (route.max_edge_px, route.max_images_per_request, route.catalog) == (
        8000,
        100,
        "anthropic",
    )
    assert small.route("gemini", "gemini-3").catalog == "google"


def test_an_unknown_provider_refuses_unless_declared(small: ProviderRegistry) -> None:
    unknown = small.route("my-proxy", "m")
    assert (unknown.path, unknown.known, unknown.api) == ("refuses", False, "openai-chat")
    declared = small.route("my-proxy", "m", ProviderOverride(True, "gemini", "cfg: providers.x"))
    assert (declared.path, declared.known, declared.api) == ("accepts", True, "gemini")
    assert declared.formats == ("image/png",)
    assert declared.source == "cfg: providers.x"


def test_an_override_without_a_value_changes_nothing(small: ProviderRegistry) -> None:
    assert small.route("anthropic", "m", ProviderOverride(None, "gemini")) == small.route(
        "anthropic", "m"
    )


def test_a_veto_wins_over_a_declaration(small: ProviderRegistry) -> None:
    route = small.route("anthropic", "gemini-2.5-pro", ProviderOverride(True))
    assert route.path == "refuses"
    assert route.reason == "`gemini-2.5-pro` is vetoed: rejected"
    assert route.source == "small.yaml"


def test_a_declaration_with_an_unknown_api_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown api `grpc`"):
        ProviderOverride(True, "grpc")


def test_every_bundled_verdict_says_what_it_rests_on() -> None:
    registry = ProviderRegistry.bundled()
    verdicts = [entry.evidence for entry in registry.entries.values()]
    verdicts += [rule.evidence for entry in registry.entries.values() for rule in entry.rules]
    verdicts += [a.evidence for entry in registry.entries.values() for a in entry.model_aliases]
    verdicts += [veto.evidence for veto in registry.vetoes]
    for evidence in verdicts:
        assert evidence.kind in ("documented", "field", "assumed")
        assert evidence.where.startswith("providers.yaml:")
        if evidence.kind != "assumed":
            # A `#` in an unquoted YAML value starts a comment: a citation cut there is lost.
            assert len(evidence.cites) > 20 and not evidence.cites.endswith(("issue", "#"))


def test_the_production_agents_allow_list_is_never_refused() -> None:
    """Regression: `openrouter`, `nous`, `azure-openai`, `anthropic-vertex`,
    `anthropic-direct`, `google-gemini` and `google-vertex-gemini` all resolved `refuses`."""
    registry = ProviderRegistry.bundled()
    allowed = (
        "openrouter", "nous", "vertex", "bedrock", "anthropic-vertex", "google-vertex",
        "anthropic", "claude", "anthropic-direct", "openai", "openai-chat", "openai-codex",
        "azure-openai",
    )  # fmt: skip
    for provider in allowed:
        assert registry.canonical(provider) in registry.entries, provider
        model = "anthropic.claude-sonnet-5" if "bedrock" in provider else "claude-sonnet-4-5"
        route = registry.route(provider, model, vision="vision")
        assert route.path != "refuses", (provider, route.reason)
    for provider in ("google", "gemini", "google-gemini", "google-vertex-gemini"):
        assert registry.route(provider, "gemini-3-pro-preview").path == "accepts", provider
        assert registry.route(provider, "gemini-2.5-pro").path == "refuses", provider


@pytest.mark.parametrize(
    ("provider", "model", "said"),
    [
        ("sambanova", "Llama-4-Maverick-17B-128E-Instruct", ", 1 image per request"),
        ("fireworks", "accounts/fireworks/models/kimi-k2p6", ", 30 images per request"),
    ],
)
def test_registry_show_counts_images_in_words(
    provider: str, model: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from visiongate.cli import main

    assert main(["registry", "show", provider, model]) == 0
    payload = next(line for line in capsys.readouterr().out.splitlines() if "payload:" in line)
    assert payload.endswith(said), payload
