"""Broken policy files give the right diagnostic at the right place (cases in YAML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from visiongate.engine import PolicyError, analyze_policy_text
from visiongate.engine._load import compile_policy_text

DATA = yaml.safe_load((Path(__file__).parent / "data" / "load_cases.yaml").read_text())


def _text(case: dict[str, Any]) -> str:
    if "text" in case:
        return str(case["text"])
    old, new = case["replace"]
    assert old in DATA["base"], f"case {case['name']!r} does not apply to the base policy"
    return str(DATA["base"]).replace(old, new, 1)


def test_base_policy_is_valid() -> None:
    compiled, diagnostics = analyze_policy_text(DATA["base"], "base.yaml")
    assert compiled is not None
    assert diagnostics == []


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda case: case["name"])
def test_broken_policy_reports_code_and_location(case: dict[str, Any]) -> None:
    _compiled, diagnostics = analyze_policy_text(_text(case), "broken.yaml")
    matching = [d for d in diagnostics if d.code == case["code"]]
    assert matching, f"expected {case['code']}, got {[d.render() for d in diagnostics]}"
    found = matching[0]
    assert (found.location.file, found.location.line, found.location.column) == (
        "broken.yaml",
        case["line"],
        case["column"],
    ), found.render()
    assert case.get("message_contains", "") in found.message
    assert case.get("help_contains", "") in found.help
    if "cells_contain" in case:
        assert case["cells_contain"] in found.cells


def test_all_diagnostics_are_collected_not_just_the_first() -> None:
    text = (
        DATA["base"].replace("path: accepts", "path: accept").replace("lane: native", "lane: nativ")
    )
    _compiled, diagnostics = analyze_policy_text(text, "two.yaml")
    assert {d.code for d in diagnostics} >= {"unknown-fact-value", "unknown-lane"}


def test_compile_raises_one_exception_type_carrying_every_diagnostic() -> None:
    text = (
        DATA["base"].replace("path: accepts", "path: accept").replace("lane: native", "lane: nativ")
    )
    with pytest.raises(PolicyError) as raised:
        compile_policy_text(text, "two.yaml")
    assert len(raised.value.diagnostics) == 2
    assert "two.yaml:14:13" in str(raised.value)


def test_every_alias_is_a_copy_of_its_anchor_that_shares_nothing() -> None:
    """An alias gives data equal to its anchor's, with its own lists and mappings (the builder's
    copy replaced `copy.deepcopy`): what one later stage changes in one place stays there."""
    from visiongate.engine._yaml import load_yaml

    text = "a: &x {k: [1, {deep: [two, 3.5, null, true]}], s: text}\nb: *x\nc: [*x, *x]\n"
    data = load_yaml(text, "alias.yaml").data
    assert data["b"] == data["a"] == data["c"][0] == data["c"][1] == yaml.safe_load(text)["a"]
    copies = [data["a"], data["b"], *data["c"]]
    for inner in (lambda d: d, lambda d: d["k"], lambda d: d["k"][1], lambda d: d["k"][1]["deep"]):
        assert len({id(inner(copy)) for copy in copies}) == len(copies)
    data["b"]["k"][1]["deep"].append("changed")
    assert data["a"]["k"][1]["deep"] == ["two", 3.5, None, True]
