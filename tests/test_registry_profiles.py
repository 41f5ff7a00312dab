"""Bedrock cross-region inference profile ids resolve to their base model (issue 35).

Regression: `us.amazon.nova-pro-v1:0` was unknown to the catalog while the bare
`amazon.nova-pro-v1:0` is vision, so `auto` kept its screenshots on text.
"""

from __future__ import annotations

import pytest

from visiongate.engine import Gate


@pytest.mark.parametrize("prefix", ["us.", "eu.", "apac.", "global."])
def test_a_profile_id_is_its_base_model_for_the_catalog_and_the_route(prefix: str) -> None:
    gate = Gate.load(routes=False)
    base = gate.decide("amazon-bedrock", "amazon.nova-pro-v1:0")
    profile = gate.decide("bedrock", f"{prefix}amazon.nova-pro-v1:0")
    assert base.facts["catalog"] == profile.facts["catalog"] == "vision"
    assert profile.lane == base.lane == "native"
    assert profile.facts["path"] == base.facts["path"] == "accepts"
    assert (
        f"inference profile `{prefix}` of `amazon.nova-pro-v1:0`" in (profile.provenance["catalog"])
    )


def test_a_listed_profile_id_is_read_as_listed_and_a_bare_prefix_is_no_model() -> None:
    gate = Gate.load(routes=False)
    listed = gate.decide("amazon-bedrock", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert (
        listed.facts["catalog"] == "vision"
        and "inference profile" not in (listed.provenance["catalog"])
    )
    assert gate.decide("amazon-bedrock", "us.").facts["catalog"] == "unknown"
    text_only = gate.decide("amazon-bedrock", "us.amazon.nova-micro-v1:0")
    assert text_only.facts["catalog"] == "no_vision" and text_only.lane == "text"
