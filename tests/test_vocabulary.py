"""Every written-out copy of the gate's vocabulary agrees with `engine/_vocabulary.py`.

The engine's vocabulary (facts and their values, lanes, sources, hit policies) is the one
home; tests derive their domains from it. What cannot import it (the JSON Schemas of the
`--json` outputs, the CLI's lists kept out of `--help`'s imports, `Literal` types) is
checked here, by rule: every schema property named after a vocabulary term must list exactly
its values, so a schema added later is checked with no edit here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import pytest

from visiongate._schemas import SCHEMA_VERSIONS, load_schema
from visiongate.engine import FACTS, LANES, SOURCES
from visiongate.engine._diagnostics import Severity
from visiongate.engine._settings import TextAction
from visiongate.engine._vocabulary import FACT_NAMES, HIT_POLICIES, TEXT_ACTIONS
from visiongate.engine.facts import _catalog, _routes

VOCABULARY: dict[str, tuple[str, ...]] = {
    **FACTS,
    "lane": LANES,
    "default": LANES,  # a policy's default lane (explain)
    "expect": LANES,
    "source": SOURCES,
    "hit_policy": HIT_POLICIES,
    "severity": get_args(Severity),
    "fail_level": get_args(Severity),
}
"""Schema property name -> the values its `enum` must have."""


def enums(node: Any, where: str) -> Iterator[tuple[str, str, list[Any]]]:
    """(where, property name, enum) for every property with an `enum`, at any depth."""
    if isinstance(node, dict):
        for name, value in (node.get("properties") or {}).items():
            if isinstance(value, dict) and "enum" in value:
                yield f"{where}/{name}", name, value["enum"]
        for key, value in node.items():
            yield from enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from enums(value, f"{where}/{index}")


def vocabulary_enums() -> list[tuple[str, str, list[Any]]]:
    found = []
    for schema in SCHEMA_VERSIONS:
        found += [hit for hit in enums(load_schema(schema), schema) if hit[1] in VOCABULARY]
    return found


@pytest.mark.parametrize(
    ("where", "name", "values"), [pytest.param(*hit, id=hit[0]) for hit in vocabulary_enums()]
)
def test_schema_enums_are_the_engine_vocabulary(where: str, name: str, values: list[str]) -> None:
    assert sorted(values) == sorted(VOCABULARY[name]), where


def test_the_schemas_name_every_fact_and_lane() -> None:
    # The rule above must have something to check: each fact, the lane and the source.
    names = {name for _where, name, _values in vocabulary_enums()}
    assert {*FACT_NAMES, "lane", "source", "hit_policy"} <= names
    facts = load_schema("decision-record")["properties"]["facts"]
    assert facts["required"] == list(FACT_NAMES) and facts["additionalProperties"] is False


def test_literal_types_are_the_engine_vocabulary() -> None:
    assert get_args(_catalog.Verdict) == FACTS["catalog"]
    assert get_args(TextAction) == TEXT_ACTIONS
    # What a learned or probed route can say: every settled value of the `path` fact.
    assert set(get_args(_routes.Verdict)) == set(FACTS["path"]) - {"unverified"}


def test_the_route_commands_sources_are_the_engines() -> None:
    # `route --help` lists them without importing the engine: its copy must not drift.
    from visiongate.cli import route

    assert route.SOURCES == SOURCES
