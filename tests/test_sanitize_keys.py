"""`_meta` key reservation under both published rules: the YAML table, checked rule by rule."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.adapters.sanitize._keys import (
    classify_meta_key,
    is_reserved_meta_key,
    reserved_by_2025_06_18,
    reserved_by_2025_11_25,
)
from visiongate.engine._settings import SanitizeSettings

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "sanitize" / "meta_keys.yaml").read_text(encoding="utf-8")
)
SETTINGS = SanitizeSettings()
LABELS = frozenset(SETTINGS.reserved_meta_labels)


def _labels(key: str) -> tuple[str, ...]:
    prefix = key.partition("/")[0]
    return tuple(
        unicodedata.normalize("NFKC", label).casefold().strip() for label in prefix.split(".")
    )


@pytest.mark.parametrize("case", CASES, ids=[repr(case["key"]) for case in CASES])
def test_verdict(case: dict[str, Any]) -> None:
    assert classify_meta_key(case["key"], SETTINGS) == case["want"]
    assert is_reserved_meta_key(case["key"], SETTINGS) == (case["want"] != "vendor")


@pytest.mark.parametrize(
    "case", [case for case in CASES if "/" in case["key"]], ids=lambda case: repr(case["key"])
)
def test_each_rule_alone(case: dict[str, Any]) -> None:
    labels = _labels(case["key"])
    assert reserved_by_2025_06_18(labels, LABELS) == ("2025-06-18" in case["rules"])
    assert reserved_by_2025_11_25(labels, LABELS) == ("2025-11-25" in case["rules"])


def test_labels_are_policy_data() -> None:
    settings = SanitizeSettings(reserved_meta_labels=("acme",))
    assert is_reserved_meta_key("com.acme/x", settings)
    assert not is_reserved_meta_key("io.modelcontextprotocol/x", settings)


def test_names_are_policy_data() -> None:
    settings = SanitizeSettings(reserved_meta_keys=("sessionId", "com.example/secret"))
    assert is_reserved_meta_key("sessionId", settings)
    assert is_reserved_meta_key("com.example/secret", settings)
    assert not is_reserved_meta_key("progressToken", settings)
