"""The schema stage validates through a schema cerberus checked once (`CheckedSchema`): it must
find exactly what plain cerberus finds, document and errors, on every kind of file it reads.

Plain cerberus here is the validator the engine used before: `StrictValidator(dict(schema))`,
which checks the schema at every validation. The documents are the shipped policies and
registry, the regression corpus, and seeded mutations of them (`_policy_mutations.py`)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from _policy_mutations import mutate
from cerberus import SchemaError

from visiongate.engine._policy_schema import POLICY_SCHEMA
from visiongate.engine._validate import (
    StrictValidator,
    _leaf_errors,
    _non_string_keys,
    checked_schema,
    strict_validator,
)
from visiongate.engine._yaml import load_yaml
from visiongate.engine.facts.registry._schema import REGISTRY_SCHEMA
from visiongate.engine.tooling.policytest._load import TEST_FILE_SCHEMA

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "policy_corpus"


def documents(folder_globs: list[tuple[Path, str]], mutations: int) -> list[Any]:
    texts = [
        path.read_text() for folder, glob in folder_globs for path in sorted(folder.glob(glob))
    ]
    rng = random.Random(38)
    texts += [mutate(rng, rng.choice(texts))[1] for _ in range(mutations)]
    found = []
    for text in texts:
        loaded = load_yaml(text, "doc.yaml")  # a refused file has no data: no schema stage
        # As the schema stage does: no mapping key that is not a string reaches cerberus.
        if isinstance(loaded.data, dict) and not _non_string_keys(loaded):
            found.append(loaded.data)
    return found


def outcome(validator: StrictValidator, document: Any) -> tuple[bool, Any, list[Any]]:
    """Whether it passed, the normalized document, and each error the diagnostics are made of."""
    ok = validator.validate(document)
    errors = [
        (
            tuple(error.document_path),
            error.code,
            error.rule,
            repr(error.constraint),
            repr(error.value),
        )
        for error in _leaf_errors(validator._errors)
    ]
    return ok, validator.document, errors


POLICIES = [(ROOT / "policies", "*.yaml"), (ROOT / "policies" / "examples", "*.yaml")]
TEST_FILES = [(ROOT / "policies", "*.test.yaml"), (ROOT / "policies" / "examples", "*.test.yaml")]


@pytest.mark.parametrize(
    ("schema", "sources", "mutations"),
    [
        (POLICY_SCHEMA, [*POLICIES, (CORPUS, "*.yaml")], 150),
        (REGISTRY_SCHEMA, [(ROOT / "policies", "providers.yaml")], 40),
        (TEST_FILE_SCHEMA, TEST_FILES, 150),
    ],
    ids=["policy", "registry", "policy test file"],
)
def test_a_checked_schema_finds_what_plain_cerberus_finds(
    schema: dict[str, Any], sources: list[tuple[Path, str]], mutations: int
) -> None:
    found = documents(sources, mutations)
    assert len(found) > 20, "too few documents to compare on"
    refused = 0
    for document in found:
        plain = outcome(StrictValidator(dict(schema)), document)
        assert outcome(strict_validator(schema), document) == plain, document
        refused += not plain[0]
    assert 0 < refused < len(found), "valid and invalid documents both compared"


def test_a_bad_schema_is_still_refused_by_cerberus() -> None:
    with pytest.raises(SchemaError):
        checked_schema({"mode": {"type": "no-such-type"}})


def test_a_schema_is_checked_once_and_its_rules_are_cerberus_own() -> None:
    assert checked_schema(POLICY_SCHEMA) is checked_schema(POLICY_SCHEMA)
    assert set(checked_schema(POLICY_SCHEMA)) == set(POLICY_SCHEMA)
