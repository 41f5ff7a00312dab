"""The provider registry shares the policy loader's strict types (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from visiongate.engine.facts.registry._registry import analyze_registry_text

BASE = yaml.safe_load(
    (Path(__file__).parent / "data" / "facts" / "registry_errors.yaml").read_text()
)["base"]


@pytest.mark.parametrize(
    ("old", "new", "code", "line"),
    [
        ("    tool_result_images: true\n", "    tool_result_images: 1\n", "bad-type", 15),
        (
            "max_edge_px: 8000, max_images_per_request: 100",
            "max_edge_px: true, max_images_per_request: 100",
            "bad-type",
            6,
        ),
        (
            "    note: tool_result content carries image blocks\n",
            "    note: '  '\n",
            "empty-value",
            19,
        ),
        (
            "  anthropic:\n    api: anthropic\n",
            "  1.5:\n    api: anthropic\n",
            "yaml-bad-key",
            13,
        ),
        ("version: 1\n", "version: !!timestamp 2024-01-01\n", "yaml-tag", 2),
    ],
    ids=["integer as boolean", "boolean as integer", "blank note", "number as provider id", "tag"],
)
def test_wrong_typed_registry_values_are_located(old: str, new: str, code: str, line: int) -> None:
    assert old in BASE
    _registry, diagnostics = analyze_registry_text(BASE.replace(old, new, 1), "broken.yaml")
    assert [(d.code, d.location.line) for d in diagnostics][:1] == [(code, line)]
