"""No false `unused-ignore` when the policy fails to load (issue 28): the table was not built,
so its findings were not looked for, and "remove it" was advice that brought the finding back
once the load error was fixed."""

from __future__ import annotations

from visiongate.engine.tooling.lint._check import lint_text

POLICY = """\
policy: example
version: "1"
description: pixels in native mode
hit_policy: unique
default: text
rules:
  # visiongate: ignore[full-domain-entry] because aux is listed to document the intent
  - id: native-mode
    when: {mode: native, aux: [set, unset]}
    lane: native
    reason: the operator asked for pixels
    {extra}
  - id: everything-else
    when: {mode: [auto, text]}
    lane: text
    reason: auto and text modes keep pixels out
invariants:
  - id: text-mode-is-text
    when: {mode: text}
    expect: text
"""


def _codes(extra: str) -> list[str]:
    return [d.code for d in lint_text(POLICY.replace("{extra}", extra), "p.yaml").diagnostics]


def test_an_ignore_of_a_table_finding_is_not_unused_when_the_policy_fails_to_load() -> None:
    assert _codes("descripton: a typo the loader refuses") == ["unknown-key"]


def test_the_same_ignore_still_suppresses_once_the_policy_loads() -> None:
    assert _codes("description: fixed") == []  # full-domain-entry, suppressed by the ignore


def test_an_ignore_that_suppresses_nothing_in_a_policy_that_loads_is_unused() -> None:
    text = POLICY.replace("{extra}", "").replace("aux: [set, unset]", "aux: set")
    found = [d.code for d in lint_text(text, "p.yaml").diagnostics]
    assert "unused-ignore" in found
