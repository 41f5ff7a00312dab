"""The model catalog: look-up order, the bundled snapshot, and files given by path.

The cases are data: `tests/data/facts/lookup.yaml`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.engine import PolicyError
from visiongate.engine.facts._catalog import CatalogAnswer, ModelCatalog
from visiongate.engine.facts._catalog_snapshot import snapshot_text

DATA = yaml.safe_load((Path(__file__).parent / "data" / "facts" / "lookup.yaml").read_text())
POLICIES = Path(__file__).parents[1] / "policies"
SOURCE = Path(__file__).parents[2] / "shared" / "data" / "models-dev-api.json"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> ModelCatalog:
    path = tmp_path_factory.mktemp("catalog") / "api.json"
    path.write_text(json.dumps(DATA["small_catalog"]), encoding="utf-8")
    return ModelCatalog.from_file(path)


def _check(answer: CatalogAnswer, case: dict[str, Any]) -> None:
    assert answer.verdict == case["verdict"], answer
    if "matched" in case:
        assert answer.matched == case["matched"], answer
    if "how" in case:
        assert answer.how == case["how"], answer
    assert case.get("how_contains", "") in answer.how, answer


@pytest.mark.parametrize("case", DATA["bundled"], ids=lambda c: f"{c['provider']}/{c['model']}")
def test_bundled_lookup(case: dict[str, Any]) -> None:
    _check(ModelCatalog.bundled().lookup(case["provider"], case["model"]), case)


@pytest.mark.parametrize("case", DATA["small"], ids=lambda c: f"{c['provider']}/{c['model']}")
def test_lookup_in_a_catalog_given_by_path(small: ModelCatalog, case: dict[str, Any]) -> None:
    _check(small.lookup(case["provider"], case["model"]), case)


def test_a_catalog_given_by_path_names_its_revision(small: ModelCatalog) -> None:
    assert small.source == DATA["small_catalog"]["_source"]
    assert small.label == "catalog api.json 0123456"
    assert small.providers == {"alpha", "beta", "gamma"}


@pytest.mark.parametrize("case", DATA["wrong_shapes"], ids=lambda c: c["name"])
def test_a_catalog_of_the_wrong_shape_is_rejected_clearly(
    tmp_path: Path, case: dict[str, Any]
) -> None:
    path = tmp_path / "wrong.json"
    path.write_text(case["text"], encoding="utf-8")
    with pytest.raises(PolicyError) as raised:
        ModelCatalog.from_file(path)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == case["code"]
    assert case["message"] in diagnostic.message
    assert str(path) in str(diagnostic.location)
    if "where" in case:
        assert str(diagnostic.location).endswith(case["where"])
    assert "models.dev/api.json" in diagnostic.help


def test_an_unreadable_catalog_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        ModelCatalog.from_file(tmp_path / "missing.json")


def test_the_bundled_snapshot_is_loaded_once() -> None:
    assert ModelCatalog.bundled() is ModelCatalog.bundled()


def test_the_bundled_snapshot_names_its_source_and_licence() -> None:
    catalog = ModelCatalog.bundled()
    assert catalog.source.startswith("models.dev (MIT) at f3fc692")
    assert catalog.label == "models.dev snapshot f3fc692 of 2026-07-02"
    assert catalog.model_count == 5276
    licence = (POLICIES / "catalog" / "LICENSE").read_text("utf-8")
    assert "MIT License" in licence
    assert "Copyright (c) models.dev" in licence


def test_the_bundled_snapshot_keeps_only_ids_names_and_modalities() -> None:
    document = json.loads((POLICIES / "catalog" / "models-dev.json").read_text("utf-8"))
    model = document["anthropic"]["models"]["claude-sonnet-4-5"]
    assert set(model) == {"id", "name", "modalities"}
    assert set(document["anthropic"]) == {"id", "name", "models"}


@pytest.mark.skipif(not SOURCE.exists(), reason="the full models.dev file is not checked out")
def test_the_bundled_snapshot_is_rebuilt_exactly_from_its_source() -> None:
    source = json.loads(SOURCE.read_text("utf-8"))
    bundled = (POLICIES / "catalog" / "models-dev.json").read_text("utf-8")
    assert snapshot_text(source) == bundled


def test_the_full_catalog_shape_is_accepted_too(tmp_path: Path) -> None:
    full = {
        "_source": "models.dev",
        "acme": {
            "id": "acme",
            "name": "Acme",
            "api": "https://acme.example/v1",
            "env": ["ACME_KEY"],
            "models": {
                "eye-1": {
                    "id": "eye-1",
                    "attachment": False,
                    "limit": {"context": 1000, "output": 100},
                    "cost": {"input": 1.0},
                    "modalities": {"input": ["text", "image"], "output": ["text"]},
                }
            },
        },
    }
    path = tmp_path / "api.json"
    path.write_text(json.dumps(full), encoding="utf-8")
    answer = ModelCatalog.from_file(path).lookup("acme", "eye-1")
    assert (answer.verdict, answer.inputs) == ("vision", ("text", "image"))
