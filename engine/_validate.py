"""Schema validation with cerberus, turned into located diagnostics.

Cerberus reports a `document_path` per error; the loader kept a location per path, so every
problem gets `file:line:col`. All errors are collected, never just the first.

The schema is the only gate between YAML and the code that reads the document, so its types
are strict: a boolean is not a number (`max_images: true` is not 1), a mapping key is a
string, and `strip_text` makes a blank string empty. Values shown in messages are cut short.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import cerberus
from cerberus import TypeDefinition
from cerberus import errors as cerberus_errors
from cerberus.schema import DefinitionSchema

from visiongate.kernel._suggest import did_you_mean

from ._diagnostics import Diagnostic
from ._yaml import DocumentPath, LoadedYaml, shown

Refine = Callable[[Diagnostic], Diagnostic]


class StrictValidator(cerberus.Validator):  # type: ignore[misc]  # cerberus is untyped
    """Cerberus, except that `True` is not an integer and not a float (bool subclasses int)."""

    types_mapping: ClassVar[dict[str, TypeDefinition]] = {
        **cerberus.Validator.types_mapping,
        "integer": TypeDefinition("integer", (int,), (bool,)),
        "float": TypeDefinition("float", (float, int), (bool,)),
    }


class CheckedSchema(DefinitionSchema):  # type: ignore[misc]  # cerberus is untyped
    """One of this package's schemas, once cerberus has checked it (`checked_schema`).

    Cerberus checks a plain schema when a validator gets it, and again at every validation: it
    copies the schema (a new `DefinitionSchema`, checked anew) and sets each top-level field
    of the copy (each one checked anew), hashing the schema for its cache of checked ones every
    time: a quarter of the loader fuzzers' validation, under a profiler. Ours never change once
    checked, so this one holds the expanded, checked rules and copies to a plain dict, as
    cerberus's own child validators use. Cerberus is pinned below 1.4; `test_validate.py`
    checks that a validation through it finds what plain cerberus finds."""

    def __init__(self, validator: cerberus.Validator, expanded: Mapping[str, Any]) -> None:
        self.validator = validator
        self.schema = expanded

    def copy(self) -> dict[str, Any]:
        return dict(self.schema)


_CHECKED: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}
"""By the schema's `id`: the schema itself (kept, so the id is never reused) and its rules as
cerberus expanded and checked them."""


def checked_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema`'s rules, expanded and checked by cerberus the first time it is asked for (a bad
    schema raises cerberus's `SchemaError` then, as a plain validator would)."""
    found = _CHECKED.get(id(schema))
    if found is None:
        found = (schema, DefinitionSchema(StrictValidator(), dict(schema)).schema)
        _CHECKED[id(schema)] = found
    return found[1]


def strict_validator(schema: Mapping[str, Any]) -> StrictValidator:
    """A validator of `schema` that does not check it again (`CheckedSchema`)."""
    validator = StrictValidator()
    validator.schema = CheckedSchema(validator, checked_schema(schema))
    return validator


def strip_text(value: Any) -> Any:
    """Strip a string before `empty: False` sees it, so `" "` counts as empty."""
    return value.strip() if isinstance(value, str) else value


def as_list(value: Any) -> Any:
    """Coerce a scalar into a one-element list (`mode: text` means `mode: [text]`)."""
    return value if isinstance(value, list) else [value]


def recode(
    diagnostic: Diagnostic, code: str, message: str, choices: Sequence[str], word: object
) -> Diagnostic:
    """The same problem under a more precise code and message, with a did-you-mean help."""
    return Diagnostic(
        code,
        diagnostic.severity,
        message,
        diagnostic.location,
        diagnostic.document_path,
        help=did_you_mean(word, sorted(choices)),
    )


def validate(
    loaded: LoadedYaml, schema: Mapping[str, Any], refine: Refine | None = None
) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """Validate a loaded document; return the normalized document and the diagnostics."""
    if not isinstance(loaded.data, dict):
        return None, [
            Diagnostic(
                "bad-type",
                "error",
                "the document must be a mapping of keys to values",
                loaded.location(()),
                help="start from `policies/default.yaml`",
            )
        ]
    key_problems = _non_string_keys(loaded)
    if key_problems:
        return None, key_problems
    validator = strict_validator(schema)
    ok = validator.validate(loaded.data)
    diagnostics: list[Diagnostic] = []
    if not ok:
        for error in _leaf_errors(validator._errors):
            diagnostic = _diagnose(error, loaded, schema)
            diagnostics.append(refine(diagnostic) if refine else diagnostic)
    diagnostics.sort(key=lambda d: (d.location.line, d.location.column))
    return (validator.document if ok else None), diagnostics


def _non_string_keys(loaded: LoadedYaml) -> list[Diagnostic]:
    """Every mapping key that YAML read as a number or a boolean (`1.5:`, `yes:`).

    Walked with an explicit stack: the loader bounds the depth, but nothing here relies on it."""
    found: list[Diagnostic] = []
    pending: list[tuple[DocumentPath, Any]] = [((), loaded.data)]
    while pending:
        path, value = pending.pop()
        if not isinstance(value, dict | list):
            continue
        children = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in children:
            part: str | int = key if isinstance(value, list) or isinstance(key, str) else str(key)
            if isinstance(value, dict) and not isinstance(key, str):
                word = loaded.boolean_words.get((*path, part), shown(key))
                found.append(
                    Diagnostic(
                        "yaml-bad-key",
                        "error",
                        f"mapping key `{word}` is read by YAML as a "
                        f"{'boolean' if isinstance(key, bool) else 'number'}, not a word",
                        loaded.location((*path, part), key=True),
                        (*path, part),
                        help=f"quote it: `'{word}'`",
                    )
                )
            pending.append(((*path, part), child))
    return sorted(found, key=lambda d: (d.location.line, d.location.column))


def _leaf_errors(errors: Sequence[Any]) -> Iterator[Any]:
    for error in errors:
        if error.is_group_error:
            yield from _leaf_errors(error.child_errors)
        else:
            yield error


def _diagnose(error: Any, loaded: LoadedYaml, schema: Mapping[str, Any]) -> Diagnostic:
    path: DocumentPath = tuple(error.document_path)
    code = error.code
    if code == cerberus_errors.REQUIRED_FIELD.code:
        return Diagnostic(
            "missing-key",
            "error",
            f"missing required key `{path[-1]}`",
            loaded.location(path[:-1]),
            path,
            help=f"add `{path[-1]}:` to this mapping",
        )
    if code == cerberus_errors.UNKNOWN_FIELD.code:
        allowed = sorted(_allowed_keys(schema, path[:-1]))
        return Diagnostic(
            "unknown-key",
            "error",
            f"unknown key `{path[-1]}`",
            loaded.location(path, key=True),
            path,
            help=did_you_mean(path[-1], allowed),
        )
    boolean_word = loaded.boolean_words.get(path) or loaded.boolean_words.get(path[:-1])
    if boolean_word is not None:
        return Diagnostic(
            "yaml-implicit-boolean",
            "error",
            f"`{boolean_word}` is read by YAML as a boolean, not as the word `{boolean_word}`",
            loaded.location(path),
            path,
            help=f"quote it: `'{boolean_word}'`",
        )
    return _value_diagnostic(error, loaded, path)


def _value_diagnostic(error: Any, loaded: LoadedYaml, path: DocumentPath) -> Diagnostic:
    code = error.code
    location = loaded.location(path)
    if code in (cerberus_errors.UNALLOWED_VALUE.code, cerberus_errors.UNALLOWED_VALUES.code):
        values = error.value if isinstance(error.value, list) else [error.value]
        allowed = [str(choice) for choice in error.constraint]
        bad = next((value for value in values if value not in error.constraint), values[0])
        return Diagnostic(
            "unknown-value",
            "error",
            f"unknown value `{shown(bad)}`",
            location,
            path,
            help=did_you_mean(shown(bad), allowed),
        )
    if code == cerberus_errors.BAD_TYPE.code:
        expected = (
            error.constraint if isinstance(error.constraint, str) else " or ".join(error.constraint)
        )
        return Diagnostic(
            "bad-type",
            "error",
            f"expected {_type_words(expected)}, found `{shown(error.value)}`",
            location,
            path,
        )
    if code == cerberus_errors.EMPTY_NOT_ALLOWED.code:
        return Diagnostic("empty-value", "error", "this value must not be empty", location, path)
    if code in (cerberus_errors.MIN_VALUE.code, cerberus_errors.MAX_VALUE.code):
        bound = "at least" if code == cerberus_errors.MIN_VALUE.code else "at most"
        return Diagnostic(
            "out-of-range",
            "error",
            f"`{shown(error.value)}` must be {bound} {error.constraint}",
            location,
            path,
        )
    if code == cerberus_errors.MAX_LENGTH.code:
        return _too_long(error, loaded, path)
    if code == cerberus_errors.REGEX_MISMATCH.code:
        return Diagnostic(
            "bad-format",
            "error",
            f"`{shown(error.value)}` is not a valid name",
            location,
            path,
            help="use letters, digits, `-`, `_` and `.`, starting with a letter or digit",
        )
    return Diagnostic(
        "invalid-value",
        "error",
        f"invalid value `{shown(error.value)}` ({error.rule})",
        location,
        path,
    )


def _too_long(error: Any, loaded: LoadedYaml, path: DocumentPath) -> Diagnostic:
    """A list past its bound is located at its first item too many; a string at itself."""
    limit = int(error.constraint)
    if isinstance(error.value, str):
        what = f"a text of {len(error.value):,} characters (at most {limit:,})"
        location = loaded.location(path)
    else:
        what = f"{len(error.value):,} items (at most {limit:,})"
        location = loaded.location((*path, limit))
    return Diagnostic(
        "too-large",
        "error",
        f"`{path[-1] if path else 'document'}` holds {what}",
        location,
        path,
        help="shorten it; the bound keeps loading and checking fast",
    )


def _type_words(expected: str) -> str:
    words = {
        "dict": "a mapping",
        "list": "a list",
        "string": "a string",
        "integer": "a whole number",
        "boolean": "true or false",
    }
    return " or ".join(words.get(part.strip(), part.strip()) for part in expected.split(" or "))


def _allowed_keys(schema: Mapping[str, Any], path: DocumentPath) -> set[str]:
    """The keys the schema allows for the mapping at `path` (list indexes step into items)."""
    level: Any = schema
    for part in path:
        if isinstance(part, int):
            level = level.get("schema", {}) if isinstance(level, Mapping) else {}
            level = level.get("schema", {}) if level.get("type") == "dict" else level
            continue
        rule = level.get(part, {}) if isinstance(level, Mapping) else {}
        level = rule.get("schema", {}) if rule.get("type") == "dict" else rule
    if isinstance(level, Mapping) and level.get("type") == "list":
        return set()
    return {key for key in level if isinstance(key, str)} if isinstance(level, Mapping) else set()
