"""The document-level half of `visiongate fmt`: changes made on ruamel's round-trip tree.

ruamel.yaml keeps comments, blank lines and quoting through a load and dump; these functions
change only what the canonical layout fixes, in place:

- a plain word YAML 1.1 reads as a boolean (`yes`, `no`, `on`, `off`) where a string belongs
  is quoted (`'no'`), as the loader's `quote it` hint says; in a boolean setting it is
  written `true` or `false`;
- `version` written as a number is quoted as written (`1.10` stays `"1.10"`, not 1.1);
- a `when` (and a test case's `expect`) is one flow mapping, facts in vocabulary order, one
  value as a scalar and several as a flow list in the order of the fact's domain;
- the keys of a flow mapping (a one-line test case, its `expect`) follow the canonical order.

ruamel loads YAML 1.2, where `yes` is a string, so nothing is lost before these run: the
policy loader, on YAML 1.1, is the one that would read it as a boolean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

from ..._vocabulary import FACT_NAMES, FACTS

BOOLEAN_WORDS: Final = frozenset(
    f(word) for word in ("yes", "no", "on", "off") for f in (str.lower, str.title, str.upper)
)
TRUE_WORDS: Final = frozenset(
    f(word) for word in ("yes", "on") for f in (str.lower, str.title, str.upper)
)
BOOLEAN_SETTINGS: Final = frozenset(
    {("sanitize", "invisible", "bidi"), ("sanitize", "invisible", "zero_width")}
)

POLICY_ORDER: Final = (
    "policy", "version", "description", "hit_policy", "default",
    "rules", "invariants", "execution", "sanitize", "lint",
)  # fmt: skip
RULE_ORDER: Final = ("id", "description", "when", "lane", "reason")
INVARIANT_ORDER: Final = ("id", "description", "when", "expect")
TEST_ORDER: Final = (
    "visiongate", "policy", "description", "coverage", "config", "catalog", "registry", "cases",
)  # fmt: skip
CASE_ORDER: Final = (
    "name", "facts", "config", "catalog", "registry", "provider", "model", "expect",
)  # fmt: skip
EXPECT_ORDER: Final = ("lane", "rule", "facts")
COVERAGE_ORDER: Final = ("rules", "cells")


def rank(order: Sequence[str], key: object) -> tuple[int, int]:
    """Sort key: known keys in canonical order, then the others as written."""
    return (order.index(key), 0) if key in order else (len(order), 0)


def _has_comments(node: Any) -> bool:
    ca = getattr(node, "ca", None)
    return bool(ca is not None and (ca.items or ca.comment or ca.end))


def _reordered(mapping: CommentedMap, order: Sequence[str]) -> CommentedMap:
    """A flow mapping with its keys in `order`; comments inside would be lost, so a mapping
    that has some is returned as it is."""
    keys = sorted(mapping, key=lambda key: rank(order, key))
    if keys == list(mapping) or _has_comments(mapping):
        return mapping
    ordered = CommentedMap((key, mapping[key]) for key in keys)
    ordered.fa.set_flow_style()
    return ordered


def _fact_values(fact: str, value: Any) -> Any:
    if not isinstance(value, list):
        return value
    if len(value) == 1:
        return value[0]
    domain = FACTS.get(fact, ())
    ordered = sorted(value, key=lambda item: domain.index(item) if item in domain else len(domain))
    listed = CommentedSeq(ordered)
    listed.fa.set_flow_style()
    return listed


def canonical_when(when: Any) -> Any:
    """`when` as one flow mapping in vocabulary order (unless comments live inside it)."""
    if not isinstance(when, CommentedMap) or _has_comments(when) or not when:
        return when
    if any(_has_comments(value) for value in when.values()):
        return when
    keys = sorted(when, key=lambda key: rank(FACT_NAMES, key))
    flow = CommentedMap((key, _fact_values(key, when[key])) for key in keys)
    flow.fa.set_flow_style()
    return flow


def quote_boolean_words(node: Any, path: tuple[str | int, ...] = ()) -> None:
    """Quote plain yes/no/on/off strings; write them `true`/`false` in boolean settings."""
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in list(items):
        here = (*path, key)
        if type(value) is str and value in BOOLEAN_WORDS:  # exactly `str`: written plain
            keyed = tuple(str(part) for part in here)
            node[key] = (
                value in TRUE_WORDS
                if keyed in BOOLEAN_SETTINGS
                else SingleQuotedScalarString(value)
            )
        elif isinstance(value, dict | list):
            quote_boolean_words(value, here)


def quote_version(document: CommentedMap, text: str) -> None:
    """`version: 1.10` as `version: "1.10"`: the number as written, never as YAML reads it."""
    value = document.get("version")
    if value is None or isinstance(value, str | bool):
        return
    line, column = document.lc.value("version")
    written = text.splitlines()[line][column:].split(" #", 1)[0].strip()
    document["version"] = DoubleQuotedScalarString(written or str(value))


def canonical_policy(document: CommentedMap, text: str) -> None:
    quote_boolean_words(document)
    quote_version(document, text)
    for section in ("rules", "invariants"):
        items = document.get(section)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, CommentedMap) and "when" in item:
                item["when"] = canonical_when(item["when"])


def canonical_test(document: CommentedMap) -> None:
    quote_boolean_words(document)
    if isinstance(document.get("coverage"), CommentedMap) and document["coverage"].fa.flow_style():
        document["coverage"] = _reordered(document["coverage"], COVERAGE_ORDER)
    cases = document.get("cases")
    for index, case in enumerate(cases if isinstance(cases, list) else ()):
        if not isinstance(case, CommentedMap):
            continue
        expect = case.get("expect")
        if isinstance(expect, CommentedMap) and expect.fa.flow_style():
            case["expect"] = _reordered(expect, EXPECT_ORDER)
        if case.fa.flow_style():
            cases[index] = _reordered(case, CASE_ORDER)
