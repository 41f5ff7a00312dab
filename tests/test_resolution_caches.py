"""What `decide` keeps between never-seen pairs (per provider, per catalog section, per cell)
and the shortcuts it takes (one pattern search, one set test per catalog id) never change an
answer: a resolution is the same whatever was resolved before it, and each shortcut agrees
with the long way it replaces."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from visiongate.engine import Gate
from visiongate.engine.facts import AgentConfig, ModelCatalog, ProviderRegistry
from visiongate.engine.facts._catalog import CatalogAnswer
from visiongate.engine.facts._keys import typo_key
from visiongate.engine.facts._resolver import FactResolver
from visiongate.engine.facts._routes import RouteOverlay
from visiongate.engine.facts._runtimes import RuntimeProbe
from visiongate.engine.facts.registry._types import Patterns

EXAMPLES = settings(max_examples=300, deadline=None)

# Never-seen pairs of every kind the caches serve, with repeats and near neighbours, so that
# each one meets caches an earlier, different pair filled.
PAIRS = [
    ("openrouter", "proxy/alias-1"),
    ("openrouter", "proxy/alias-2"),
    ("openrouter", "google/gemma-9:free"),
    ("openrouter", "qwen/qwen2.5-vl-72b-instruct:free"),
    ("openrouter", "deepseek/deepseek-v3.2:nitro"),
    ("my-gateway", "model-1"),
    ("my-gatewy", "model-1"),
    ("openruoter", "gpt-4o"),
    ("anthropic", "claude-sonnet-9-1"),
    ("anthropic", "claude-sonet-4-5"),
    ("claude", "claude-sonnet-4-5"),
    ("xai", "grok-9"),
    ("xai", "xai/grok-4"),
    ("x-ai", "grok-4"),
    ("mistral", "mistral-large-9"),
    ("mistral", "pixtral-large-latest"),
    ("gemini", "gemini-2.0-flash"),
    ("google", "gemini-flash-latest"),
    ("groq", "gpt-oss-120b-cloud"),
    ("myproxy", "m1"),
    ("myproxy", "m2"),
    (" OpenRouter ", "openai/gpt-4o"),
]
CONFIG = {
    "providers": {
        "myproxy": {"tool_result_images": True, "models": {"m1": {"supports_vision": True}}},
        "openrouter": {"base_url": "https://openrouter.ai/api/v1"},
    },
    "model_overrides": {"proxy/alias-2": {"supports_vision": True}},
}


def _fresh_resolver(runtimes: Path) -> FactResolver:
    """A resolver over freshly loaded inputs: none of the bundled ones' caches are warm."""
    files = resources.files("visiongate.policies")
    catalog = ModelCatalog.from_text(
        (files / "catalog" / "models-dev.json").read_text("utf-8"), "catalog/models-dev.json"
    )
    registry = ProviderRegistry.from_text(
        (files / "providers.yaml").read_text("utf-8"), "providers.yaml"
    )
    return FactResolver(
        AgentConfig.from_mapping(CONFIG),
        catalog,
        registry,
        routes=RouteOverlay(None),
        runtimes=RuntimeProbe(runtimes),
    )


@pytest.mark.slow  # over 1.5 s in process: out of the fast subset (2026-12-02)
def test_a_resolution_does_not_depend_on_what_was_resolved_before(tmp_path: Path) -> None:
    runtimes = tmp_path / "runtimes.json"
    forward, backward = _fresh_resolver(runtimes), _fresh_resolver(runtimes)
    ahead = {pair: repr(forward.resolve(*pair)) for pair in PAIRS}
    behind = {pair: repr(backward.resolve(*pair)) for pair in reversed(PAIRS)}
    assert ahead == behind
    forward.forget()  # the memo and the per-provider parts go; the answers stay
    assert {pair: repr(forward.resolve(*pair)) for pair in PAIRS} == ahead


def _fields_given(value: Any) -> None:
    assert set(vars(value)) == {field.name for field in fields(value)}, type(value).__name__


def test_values_built_without_their_init_have_every_field() -> None:
    gate = Gate.load(config=CONFIG, routes=False)
    for provider, model in PAIRS:
        decision = gate.decide(provider, model)
        resolved = gate.resolver.resolve(provider, model)
        for value in (resolved, resolved.route, gate.resolver.locate(provider, model)):
            _fields_given(value)
        if resolved.catalog_answer is not None:
            _fields_given(resolved.catalog_answer)
        _fields_given(decision._context)


SEGMENTS = st.text(alphabet="abx-.:\nZA", max_size=3)
NAMES = st.lists(SEGMENTS, max_size=4).map("/".join)
GLOBS = st.lists(
    st.lists(st.text(alphabet="abx*?-.[]!\nZ", max_size=3), min_size=1, max_size=3).map("/".join),
    min_size=1,
    max_size=3,
)


def _matches_the_long_way(patterns: list[str], name: str) -> bool:
    if "*" in patterns:
        return True
    regex = re.compile("|".join(fnmatch.translate(pattern.lower()) for pattern in patterns))
    folded = name.lower()
    return bool(regex.match(folded) or regex.match(folded.rpartition("/")[2]))


@settings(max_examples=1000, deadline=None)
@given(GLOBS, NAMES)
def test_one_pattern_search_matches_an_id_or_its_last_segment(
    patterns: list[str], name: str
) -> None:
    assert Patterns.of(patterns).matches(name) == _matches_the_long_way(patterns, name)


@EXAMPLES
@given(st.text(max_size=20))
def test_the_typo_key_of_an_ascii_id_is_the_general_one(model: str) -> None:
    dropped = "aeiou" + "".join(chr(code) for code in range(128) if not chr(code).isalnum())
    assert typo_key(model) == model.lower().translate(str.maketrans("", "", dropped))


CATALOG = ModelCatalog.bundled()
LISTED = sorted(CATALOG.model_paths())[::40]
SECTIONS = [*sorted({path.partition("/")[0] for path in LISTED})[:12], "nobody"]


def _an_id(path: str, case: int, suffix: str, prefix: str) -> str:
    model = path.partition("/")[2]
    model = model.upper() if case == 1 else model.lower() if case == 2 else model
    return f"{prefix}{model}{suffix}"


IDS = st.builds(
    _an_id,
    st.sampled_from(LISTED),
    st.integers(0, 2),
    st.sampled_from(["", ":free", ":FREE", "-cloud", ":cloud", ":nitro", "x", " "]),
    st.sampled_from(["", "anthropic/", "x-ai/", "nobody/", " "]),
)
LOOKUPS = st.lists(
    st.tuples(st.sampled_from(SECTIONS), IDS | st.text(max_size=8), st.sampled_from(["a", "b"])),
    max_size=5,
)


def _first_known_the_long_way(lookups: list[tuple[str, str, str]]) -> tuple[CatalogAnswer, str]:
    answer, note = CatalogAnswer("unknown"), ""
    for section, candidate, how in lookups:
        answer, note = CATALOG.lookup(section, candidate), how
        if answer.verdict != "unknown":
            break
    return answer, note


@EXAMPLES
@given(LOOKUPS)
def test_the_first_known_look_up_is_the_one_a_look_up_loop_finds(
    lookups: list[tuple[str, str, str]],
) -> None:
    assert CATALOG.first_known(lookups) == _first_known_the_long_way(lookups)
