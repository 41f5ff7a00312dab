"""A tool's declared `outputSchema`: check routed structured content against it, and widen it
where routing changes what a field may hold.

Routing keeps structured content but changes its image payloads (`_inline`): a fitted image may
change format (`image/png` to `image/jpeg`), and an image not sent as pixels becomes its
`MEDIA:` path (or the note on why it was refused) in place of its base64. A schema that pins
those fields (a `pattern`, `format`, `contentEncoding`, `const` or `enum` on `data`, `blob` or a
media type, or a string schema meant for base64 or data URLs) would reject such a result, so
`relaxed_output_schema` drops those constraints, and only those: the schema a client is given
is then one that every routed result satisfies. A schema without them comes back unchanged
(the same object), so most listings pass byte for byte.

`schema_problem` validates with `jsonschema`, as the MCP SDK's client does: the validator for
the schema's own `$schema` draft, `$ref`s resolved within the schema document only. The schema
and the content both come from the server, so the check runs under a bound: every `pattern` and
`patternProperties` match runs on the `regex` engine with the time left of the check's
`CHECK_SECONDS` (the standard `re` backtracks for ever on `^(a+)+$` and holds the GIL while it
does), and a `$ref` loop or a nesting too deep to follow is a problem, not a RecursionError.
A problem never quotes the content: it may be an image's base64 or text a session must not see.
"""

from __future__ import annotations

import contextvars
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import regex
from jsonschema import SchemaError, _keywords, _legacy_keywords, _utils
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

from ._inline import MEDIA_TYPE_KEYS, PAYLOAD_KEYS

__all__ = ["CHECK_SECONDS", "Relaxed", "out_of_time", "relaxed_output_schema", "schema_problem"]

CHECK_SECONDS: Final = 2.0
"""How long one check of a result against its output schema may take, patterns and all."""
_OUT_OF_TIME: Final = (
    f"checking it took longer than the bound of {CHECK_SECONDS:g} s (a `pattern` that backtracks?)"
)

STRING_CONSTRAINTS: Final = (
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "const",
    "enum",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
)
"""What a string schema may say that a `MEDIA:` path or another image format would break."""
_PAYLOAD_FORMATS: Final = frozenset({"byte", "binary", "data-url", "base64"})
_RELAXED_NOTE: Final = (
    "(visiongate: holds the image's MEDIA: path, or why it was not sent; an image sent as "
    "pixels is in the content)"
)
_ONE_SCHEMA: Final = (
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
_VALIDATORS_KEPT: Final = 256


@dataclass(frozen=True)
class Relaxed:
    """An output schema as the proxy advertises it, and what was widened (JSON pointers into
    the declared schema, each with the keywords dropped there)."""

    schema: Mapping[str, Any]
    changes: tuple[str, ...] = ()


def relaxed_output_schema(schema: Mapping[str, Any]) -> Relaxed:
    """`schema` with the constraints routing could break dropped; `schema` itself, with no
    changes, when it has none."""
    changes: list[str] = []
    relaxed = _schema(schema, "", changes, payload_field=False)
    if not changes:
        return Relaxed(schema)
    return Relaxed(relaxed, tuple(changes))


def schema_problem(schema: Mapping[str, Any], instance: Any) -> str | None:
    """Why `instance` does not satisfy `schema` (one line naming the place and the keyword,
    never quoting the content), or None when it does; `out_of_time` tells whether the check
    ran out of its `CHECK_SECONDS`. Safe to call on any thread."""
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
    except SchemaError as error:
        return f"the output schema is not a valid JSON Schema: {error.message}"
    except (TypeError, ValueError, RecursionError) as error:
        return f"the output schema cannot be read: {_reason(error)}"
    bound = _DEADLINE.set(time.monotonic() + CHECK_SECONDS)
    try:
        found = best_match(validator.iter_errors(instance))
    except Unresolvable as unresolved:
        return f"the output schema has a `$ref` that does not resolve: {unresolved}"
    except RecursionError:
        return "the output schema's `$ref`s loop, or the content nests too deep to check"
    except regex.error as error:
        return f"the output schema has a `pattern` that cannot be read: {error}"
    except _OutOfTimeError:
        return _OUT_OF_TIME
    finally:
        _DEADLINE.reset(bound)
    if found is None:
        return None
    where = "/".join(str(part) for part in found.absolute_path)
    return f"at `/{where}`: {_unmet(found.validator, found.validator_value, found.instance)}"


def out_of_time(problem: str | None) -> bool:
    """Whether `problem` (from `schema_problem`) says the check ran out of its bound."""
    return problem == _OUT_OF_TIME


def _unmet(keyword: Any, wanted: Any, instance: Any) -> str:
    """What a value fails, from the schema's side only."""
    if keyword == "type":
        return f"{_json_type(instance)} where the schema wants `{_brief(wanted)}`"
    return f"{_json_type(instance)} that does not satisfy `{keyword}`: `{_brief(wanted)}`"


def _json_type(value: Any) -> str:
    kinds = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (str, "a string"))
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return next((name for kind, name in kinds if isinstance(value, kind)), "a value")


def _brief(value: Any) -> str:
    """A schema's value as a problem quotes it: a string as it is, else its JSON, clipped."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = "…"
    return text if len(text) <= 80 else f"{text[:79]}…"


def _reason(error: Exception) -> str:
    return "it nests too deep" if isinstance(error, RecursionError) else str(error)


# -- patterns under the check's deadline ---------------------------------------------------


class _OutOfTimeError(Exception):
    """The check's deadline passed."""


_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "visiongate_schema_deadline", default=None
)


class _BoundedRe:
    """What jsonschema's keyword modules know as `re`. They match `pattern` and
    `patternProperties` with `re.search` (in `_keywords`, and in `_utils` for
    `additionalProperties` and `unevaluatedProperties`), and offer no hook for another engine;
    overriding the keywords would leave the helpers. So their module-level `re` is this
    object: the standard module itself, except inside `schema_problem`, where `search` runs
    on `regex` with the check's time left and without the GIL (other threads, the event loop
    among them, run on while it matches). Anyone else validating in the process, the MCP
    SDK's client included, sees the standard `re` unchanged."""

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    def search(self, pattern: str, string: str, flags: int = 0) -> Any:
        deadline = _DEADLINE.get()
        if deadline is None:
            return re.search(pattern, string, flags)
        left = deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTimeError
        try:
            return regex.search(pattern, string, flags, timeout=left, concurrent=True)
        except TimeoutError:
            raise _OutOfTimeError from None


for _module in (_keywords, _legacy_keywords, _utils):
    _module.re = _BoundedRe()  # type: ignore[attr-defined]  # see `_BoundedRe`


@lru_cache(maxsize=_VALIDATORS_KEPT)
def _validator(schema_json: str) -> Validator:
    """The compiled validator for a schema (its JSON text is the cache key): compiling costs
    far more than validating, and a proxy validates the same few schemas again and again."""
    schema = json.loads(schema_json)
    cls = validator_for(schema)
    cls.check_schema(schema)
    validator: Validator = cls(schema, registry=Registry())
    return validator


# -- widening ------------------------------------------------------------------------------------


def _schema(node: Any, pointer: str, changes: list[str], *, payload_field: bool) -> Any:
    if not isinstance(node, Mapping):
        return node
    relaxed: dict[str, Any] = dict(node)
    if payload_field or _holds_payload_string(node):
        dropped = [keyword for keyword in STRING_CONSTRAINTS if keyword in relaxed]
        if dropped and _may_be_string(node):
            for keyword in dropped:
                del relaxed[keyword]
            relaxed["description"] = f"{node.get('description', '')} {_RELAXED_NOTE}".strip()
            changes.append(f"{pointer or '/'}: {', '.join(dropped)}")
    for key in _ONE_SCHEMA:
        if isinstance(node.get(key), Mapping):
            relaxed[key] = _schema(node[key], f"{pointer}/{key}", changes, payload_field=False)
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), Sequence) and not isinstance(node.get(key), str):
            relaxed[key] = _each(node[key], f"{pointer}/{key}", changes)
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), Mapping):
            relaxed[key] = _members(node[key], f"{pointer}/{key}", changes, key == "properties")
    return relaxed


def _each(items: Sequence[Any], pointer: str, changes: list[str]) -> list[Any]:
    return [
        _schema(item, f"{pointer}/{i}", changes, payload_field=False)
        for i, item in enumerate(items)
    ]


def _members(
    members: Mapping[str, Any], pointer: str, changes: list[str], properties: bool
) -> dict[str, Any]:
    named = (*PAYLOAD_KEYS, *MEDIA_TYPE_KEYS) if properties else ()
    return {
        name: _schema(member, f"{pointer}/{_escaped(name)}", changes, payload_field=name in named)
        for name, member in members.items()
    }


def _holds_payload_string(node: Mapping[str, Any]) -> bool:
    """A string schema meant for base64 image data or a data URL, whatever its property name."""
    encoding = str(node.get("contentEncoding", "")).lower()
    media_type = str(node.get("contentMediaType", "")).lower()
    pattern = str(node.get("pattern", ""))
    return (
        encoding == "base64"
        or media_type.startswith("image/")
        or str(node.get("format", "")).lower() in _PAYLOAD_FORMATS
        or "data:" in pattern
        or "base64" in pattern
    )


def _may_be_string(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    if kind is None:
        return True
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def _escaped(name: str) -> str:
    """A JSON pointer token (RFC 6901)."""
    return name.replace("~", "~0").replace("/", "~1")
