"""Warnings for the operator's own contradictions, as the catalog shows them (issue 35).

Regression: `native` on a model the catalog knows is text-only warned nowhere (the provider
answers 400), and `--provider anthropic --model gpt-5` decided native without a word.
"""

from __future__ import annotations

import pytest
from _cli_helpers import run

from visiongate.engine import Gate

NATIVE = {"agent": {"image_input_mode": "native"}}


@pytest.mark.parametrize(
    ("provider", "model", "matched"),
    [
        ("deepseek", "deepseek-chat", "deepseek/deepseek-chat"),
        ("groq", "llama-3.3-70b-versatile", "groq/llama-3.3-70b-versatile"),
    ],
)
def test_native_on_a_text_only_model_is_warned(provider: str, model: str, matched: str) -> None:
    decision = Gate.load(config=NATIVE, routes=False).decide(provider, model)
    assert decision.facts["catalog"] == "no_vision"
    said = [w for w in decision.warnings if "`agent.image_input_mode` is `native`" in w]
    assert len(said) == 1 and f"lists `{matched}` as text-only (input=[text])" in said[0]
    assert not Gate.load(routes=False).decide(provider, model).warnings  # `auto`: no mistake


def test_a_model_only_other_providers_list_is_warned() -> None:
    decision = Gate.load(routes=False).decide("anthropic", "gpt-5")
    (warning,) = decision.warnings
    assert warning.startswith("model `gpt-5` is not in the `anthropic` section of models.dev")
    assert "only under other providers (`" in warning and "is `anthropic` the provider meant?" in (
        warning
    )


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-5"),
        ("openrouter", "openai/gpt-5"),
        ("openrouter", "x-ai/grok-4"),
        ("xai", "grok-4"),
        ("amazon-bedrock", "us.amazon.nova-pro-v1:0"),
    ],
)
def test_a_pair_the_catalog_lists_as_given_is_not_warned(provider: str, model: str) -> None:
    assert Gate.load(config=NATIVE, routes=False).decide(provider, model).warnings == ()


def test_decide_says_the_contradiction_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "decide", "--provider", "anthropic", "--model", "gpt-5")
    assert code == 0
    assert "visiongate decide: warning: model `gpt-5` is not in the `anthropic` section" in err
