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
the schema's own `$schema` draft, `$ref`s resolved within the schema document only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

from ._inline import MEDIA_TYPE_KEYS, PAYLOAD_KEYS

__all__ = ["Relaxed", "relaxed_output_schema", "schema_problem"]

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
    "(visiongate: holds the image data when the image is sent as pixels, else its MEDIA: path "
    "or why it was not sent)"
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
    """Why `instance` does not satisfy `schema` (one line, the error a client would report),
    or None when it does."""
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
    except SchemaError as error:
        return f"the output schema is not a valid JSON Schema: {error.message}"
    except (TypeError, ValueError) as error:
        return f"the output schema cannot be read: {error}"
    try:
        found = best_match(validator.iter_errors(instance))
    except Unresolvable as unresolved:
        return f"the output schema has a `$ref` that does not resolve: {unresolved}"
    if found is None:
        return None
    where = "/".join(str(part) for part in found.absolute_path)
    return f"at `/{where}`: {found.message}"


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
