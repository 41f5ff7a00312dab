"""Every code a command can report: its default severity, category and summary.

Regal's model: one stable id per check, a documentation page per id
(`policy_docs/lint/<code>.md`) and a level that configuration may change. Codes the loader
itself reports as errors are `fixed`: the gate refuses such a policy whatever the linter
is told, so neither `lint.severity` nor an inline ignore can lower them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..._diagnostics import Severity


@dataclass(frozen=True)
class LintCode:
    code: str
    severity: Severity
    category: str
    summary: str
    fixed: bool = False
    """A load error: the policy cannot be used, so the level cannot be changed or ignored."""


def _load(code: str, category: str, summary: str) -> LintCode:
    return LintCode(code, "error", category, summary, fixed=True)


_CODES: Final[tuple[LintCode, ...]] = (
    # The file and its YAML.
    _load("unreadable-file", "file", "the file cannot be read as UTF-8 text"),
    _load("yaml-syntax", "yaml", "the file is not valid YAML"),
    _load("empty-document", "yaml", "the file holds no YAML document"),
    _load("duplicate-key", "yaml", "a mapping holds the same key twice"),
    _load("yaml-bad-key", "yaml", "a mapping key is not a plain word"),
    _load("yaml-implicit-boolean", "yaml", "an unquoted yes/no/on/off where a word was meant"),
    _load("yaml-tag", "yaml", "an explicit tag that is not read, or a value that does not fit it"),
    _load("too-deep", "yaml", "values nested deeper than a policy file may nest them"),
    _load("recursive-alias", "yaml", "an alias inside the node it refers to"),
    _load("alias-expansion", "yaml", "aliases that expand to more values than allowed"),
    _load("too-large", "file", "a file, string, list or number past its size bound"),
    LintCode("yaml-boolean-word", "warning", "yaml", "a boolean setting written as yes/no/on/off"),
    LintCode("unquoted-version", "warning", "yaml", "`version` written as a number, not a string"),
    LintCode("invisible-character", "warning", "text", "invisible or control characters in text"),
    LintCode(
        "deprecated-setting", "warning", "schema", "an older spelling of a setting, still read"
    ),
    LintCode("clamped-setting", "warning", "schema", "a byte budget outside its range, clamped"),
    # The schema and the vocabulary.
    _load("missing-key", "schema", "a required key is missing"),
    _load("unknown-key", "schema", "a key the policy language does not define"),
    _load("unknown-fact", "schema", "a `when` names a fact that does not exist"),
    _load("unknown-fact-value", "schema", "a `when` uses a value outside the fact's domain"),
    _load("unknown-lane", "schema", "a lane that does not exist"),
    _load("unknown-value", "schema", "a value outside the allowed set"),
    _load("bad-type", "schema", "a value of the wrong kind (a list for a word, ...)"),
    _load("empty-value", "schema", "a value that must not be empty is empty"),
    _load("out-of-range", "schema", "a number outside its allowed range"),
    _load("bad-format", "schema", "an id or name with characters that are not allowed"),
    _load("invalid-value", "schema", "a value the schema refuses for another reason"),
    _load("duplicate-rule-id", "schema", "two rules share an id"),
    _load("duplicate-invariant-id", "schema", "two invariants share an id"),
    _load("too-many-rules", "schema", "more rules than a policy may hold"),
    # The decision table, computed exactly over every cell.
    _load("overlap", "table", "two rules match one cell under `hit_policy: unique`"),
    _load("invariant-violated", "table", "an invariant fails on some cells"),
    LintCode("gap", "warning", "table", "cells no rule matches (they fall back to the default)"),
    LintCode("shadowed", "error", "table", "a rule that matches cells but never wins one"),
    LintCode("redundant", "warning", "table", "a rule whose removal would change no lane"),
    LintCode("duplicate", "warning", "table", "two rules with the same `when` and the same lane"),
    LintCode("conflict", "error", "table", "two rules with the same `when` and different lanes"),
    LintCode("irrelevant-fact", "warning", "table", "a `when` entry whose removal changes no lane"),
    LintCode("full-domain-entry", "warning", "table", "a `when` entry listing every value"),
    LintCode("contractible", "info", "table", "two rules that could be merged into one"),
    LintCode("hit-policy-first", "info", "table", "`hit_policy: first` makes rule order decide"),
    LintCode("missing-invariants", "info", "table", "a policy that states no invariants"),
    # The linter's own configuration and inline ignores.
    LintCode("bad-lint-config", "warning", "lint", "a `lint:` setting that cannot apply"),
    LintCode("bad-ignore", "warning", "lint", "an ignore comment that cannot apply"),
    LintCode("unused-ignore", "warning", "lint", "an ignore comment that suppresses nothing"),
    # An agent config (`lint --config`, `decide --config`, every record the gate writes).
    LintCode("invalid-mode", "error", "config", "an `agent.image_input_mode` that is not a mode"),
    LintCode("literal-api-key", "error", "config", "a key written in the file, not an env var"),
    LintCode("invalid-vision-setting", "error", "config", "a vision setting the backend refuses"),
    LintCode("unknown-config-key", "warning", "config", "a near miss of a key visiongate reads"),
    LintCode("misspelt-routing-key", "error", "config", "a near miss of a key that routes images"),
    LintCode(
        "ignored-config-key", "warning", "config", "a production agent key visiongate does not read"
    ),
    LintCode("config-not-mapping", "warning", "config", "a section that is not a mapping"),
    LintCode("invalid-boolean", "warning", "config", "a setting that must be true or false"),
    LintCode("invalid-byte-count", "warning", "config", "a byte count that is not a number"),
    LintCode("clamped-byte-count", "warning", "config", "a byte count outside its range"),
    LintCode("config-not-list", "warning", "config", "a section that must be a list"),
    LintCode("invalid-url", "warning", "config", "a URL setting that is not http(s)"),
    LintCode(
        "custom-provider-unnamed", "warning", "config", "a `custom_providers` entry with no name"
    ),
    LintCode("invalid-api", "warning", "config", "a provider's `api` that names no API shape"),
    LintCode(
        "api-without-declaration", "warning", "config", "an `api` without `tool_result_images`"
    ),
    # A provider registry (`--registry`), a model catalog (`--catalog`), the project's own
    # configuration, and a policy edit the running gate refuses.
    _load("duplicate-provider-name", "registry", "an alias that already names another provider"),
    _load("uncited-evidence", "registry", "`documented` or `field` evidence without `cites`"),
    _load("unknown-provider", "registry", "a base URL route to a provider not listed"),
    _load("unknown-api", "registry", "an `api` that names no API shape"),
    _load(
        "unknown-format", "registry", "an image format that is not a media type visiongate knows"
    ),
    _load("unknown-evidence", "registry", "an `evidence` that is not one of the kinds"),
    _load("catalog-json", "catalog", "the model catalog is not valid JSON"),
    _load("catalog-shape", "catalog", "the model catalog is not shaped like models.dev's"),
    _load("bad-project-config", "project", "a `[tool.visiongate]` setting that cannot apply"),
    _load("invariant-dropped", "gate", "a policy edit that loses an invariant in force"),
)

LINT_CODES: Final[dict[str, LintCode]] = {entry.code: entry for entry in _CODES}
POLICY_CATEGORIES: Final = ("file", "yaml", "schema", "text", "table", "lint")
"""The categories of what `lint` reports on a policy file; the others are other files'."""

DOCS_DIR: Final = "policy_docs/lint"


def lint_code(code: str) -> LintCode:
    """The catalog entry of a code; an unknown code (never expected) is a fixed error."""
    return LINT_CODES.get(code) or LintCode(code, "error", "other", code, fixed=True)


def docs_path(code: str) -> str:
    """The documentation page of a code, relative to the project root."""
    return f"{DOCS_DIR}/{code}.md"
