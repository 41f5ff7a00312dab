"""The production agent's config keys, read as it writes them (issue 35).

Each case is built from the shape its `agent/models_dev.py` documents:
`model_overrides.<provider>.<model>` is "an explicit partial patch that always wins over the
catalog"; `model_overrides.<provider>._default` and the top-level `model_overrides._default`
are fill-gap defaults, used only on a catalog miss.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from visiongate.engine import Gate

NESTED = """\
model_overrides:
  anthropic:
    claude-opus-4-5: {supports_vision: false}
    _default: {supports_vision: true}
  openrouter:
    my-team-alias: {supports_vision: true}
  _default: {supports_vision: false}
"""


@pytest.fixture
def gate(tmp_path: Path) -> Gate:
    config = tmp_path / "agent.yaml"
    config.write_text(NESTED)
    return Gate.load(config=config, routes=False)


def test_a_nested_override_false_keeps_pixels_from_a_catalogued_vision_model(gate: Gate) -> None:
    """Regression: `model_overrides.anthropic.claude-opus-4-5.supports_vision: false` still
    sent pixels to claude-opus-4-5 (the nested form was read as a model named `anthropic`)."""
    decision = gate.decide("anthropic", "claude-opus-4-5")
    assert decision.lane == "text" and decision.facts["catalog"] == "no_vision"
    assert (
        "model_overrides.anthropic.claude-opus-4-5.supports_vision: false"
        in (decision.provenance["catalog"])
    )


def test_a_nested_override_true_puts_an_alias_on_the_native_lane(gate: Gate) -> None:
    """Regression: `model_overrides.openrouter.<alias>.supports_vision: true` left it on text."""
    decision = gate.decide("openrouter", "my-team-alias")
    assert decision.facts["catalog"] == "vision"
    assert "model_overrides.openrouter.my-team-alias" in decision.provenance["catalog"]


def test_a_default_fills_only_a_catalog_miss(gate: Gate) -> None:
    known = gate.decide("anthropic", "claude-sonnet-4-5")
    assert known.facts["catalog"] == "vision" and "_default" not in known.provenance["catalog"]
    missed = gate.decide("anthropic", "claude-next-preview")
    assert missed.facts["catalog"] == "vision"
    assert (
        "model_overrides.anthropic._default.supports_vision: true (fills a catalog miss)"
        in (missed.provenance["catalog"])
    )


def test_the_provider_default_wins_over_the_top_level_default(gate: Gate) -> None:
    assert gate.decide("anthropic", "claude-next-preview").facts["catalog"] == "vision"
    other = gate.decide("openrouter", "some/unlisted-model")
    assert other.facts["catalog"] == "no_vision"
    assert "model_overrides._default.supports_vision: false" in other.provenance["catalog"]


def test_the_flat_form_still_reads_and_a_default_is_no_model(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        "model_overrides:\n  claude-sonnet-4-5: {supports_vision: false}\n"
        "  _default: {supports_vision: true}\n"
    )
    gate = Gate.load(config=config, routes=False)
    assert gate.decide("anthropic", "claude-sonnet-4-5").facts["catalog"] == "no_vision"
    # `_default` is never an explicit override of a model called `_default`: it fills a miss.
    named = gate.decide("anthropic", "_default").provenance["catalog"]
    assert named.startswith("agent.yaml: model_overrides._default.supports_vision: true (fills")
    assert not gate.resolver.config.errors


# `providers.<name>.catalog_provider` and the legacy `custom_providers[].catalog_provider`
# name the catalogued vendor a reseller serves (production agent, #112649).
RESELLERS = """\
providers:
  my-reseller:
    base_url: https://api.reseller.example/v1
    api: anthropic
    catalog_provider: anthropic
custom_providers:
  - name: corp-claude
    base_url: https://llm.corp.example/v1
    catalog_provider: anthropic
"""


@pytest.mark.parametrize("provider", ["my-reseller", "corp-claude", "custom:corp-claude"])
def test_a_declared_reseller_reads_its_vendors_catalog_and_route_unverified(
    tmp_path: Path, provider: str
) -> None:
    """Regression: a declared reseller of a catalogued vendor was refused (catalog unknown,
    path refuses), so its images never reached a model that reads them."""
    config = tmp_path / "agent.yaml"
    config.write_text(RESELLERS)
    gate = Gate.load(config=config, routes=False)
    decision = gate.decide(provider, "claude-sonnet-4-5")
    assert decision.facts["catalog"] == "vision"
    assert decision.provenance["catalog"].endswith(
        "anthropic/claude-sonnet-4-5 input=[text, image, pdf]"
    )
    assert decision.facts["path"] == "unverified"  # never more than the reseller shows
    route = gate.resolver.resolve(provider, "claude-sonnet-4-5").route
    assert route.api == "anthropic" and route.evidence == "assumed"
    assert ".catalog_provider: `anthropic`, resold" in decision.provenance["path"]
    assert not gate.resolver.config.diagnostics  # `api` with `catalog_provider` has an effect


def test_a_reseller_of_a_text_only_model_stays_text(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("providers:\n  ds-reseller: {catalog_provider: deepseek, api: openai-chat}\n")
    decision = Gate.load(config=config, routes=False).decide("ds-reseller", "deepseek-chat")
    assert decision.facts["catalog"] == "no_vision" and decision.lane == "text"


def test_a_reseller_of_a_vendor_the_registry_does_not_list_is_still_refused(
    tmp_path: Path,
) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("providers:\n  resold: {catalog_provider: no-such-vendor}\n")
    decision = Gate.load(config=config, routes=False).decide("resold", "m")
    assert decision.facts["path"] == "refuses"
