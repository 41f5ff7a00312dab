"""The cerberus schema of the provider registry (`policies/providers.yaml`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from visiongate.kernel.shapes import API_NAMES, USER_AFTER_TOOL

from ..._diagnostics import Diagnostic
from ..._validate import as_list, recode, strip_text
from ..._vocabulary import FACTS
from ..._yaml import LoadedYaml
from .._runtimes import RUNTIMES
from ._route import EVIDENCE
from ._types import MEDIA_TYPES

__all__ = ["API_NAMES", "CITED_EVIDENCE", "EVIDENCE", "MEDIA_TYPES", "REGISTRY_SCHEMA"]


EVIDENCE_MEANS: Final = {
    "documented": "a provider document says so",
    "field": "a production agent ships the route open or users report it; no provider document",
    "assumed": "nobody says either way; the verdict follows the API's general shape",
    "declared": "the agent config declares it",
    "learned": "the provider rejected images on this machine",
    "probed": "a probe on this machine showed it",
}
"""What each kind of evidence rests on (for `registry show`)."""

CITED_EVIDENCE: Final = ("documented", "field")
"""Evidence that must name its source in `cites`."""


PROVIDER_ID_PATTERN: Final = r"^[a-z0-9][a-z0-9._-]*$"

_PATTERNS: dict[str, Any] = {
    "type": "list",
    "coerce": as_list,
    "empty": False,
    "schema": {"type": "string", "coerce": strip_text, "empty": False, "maxlength": 256},
}
# Notes are copied into decision records: a blank one says nothing, a huge one bloats them.
_NOTE: dict[str, Any] = {
    "type": "string",
    "required": True,
    "coerce": strip_text,
    "empty": False,
    "maxlength": 1_000,
}
_EVIDENCE: dict[str, Any] = {"type": "string", "required": True, "allowed": list(EVIDENCE)}
_CITES: dict[str, Any] = {
    "type": "string",
    "coerce": strip_text,
    "empty": False,
    "maxlength": 1_000,
}


def limits_schema() -> dict[str, Any]:
    return {
        "formats": {
            "type": "list",
            "empty": False,
            "schema": {"type": "string", "allowed": list(MEDIA_TYPES)},
        },
        "max_image_base64": {"type": "integer", "min": 1},
        "max_edge_px": {"type": "integer", "min": 64},
        "max_images_per_request": {"type": "integer", "min": 1},
    }


# A registry may override a shape's own limits (`visiongate.kernel.shapes`) for every provider.
API_SCHEMA: dict[str, Any] = {**limits_schema(), "note": {**_NOTE, "required": False}}

RULE_SCHEMA: dict[str, Any] = {
    "match": {**_PATTERNS, "required": True},
    "when_catalog": {
        "type": "list",
        "coerce": as_list,
        "empty": False,
        "schema": {"type": "string", "allowed": list(FACTS["catalog"])},
    },
    "tool_result_images": {"type": "boolean", "required": True},
    "evidence": _EVIDENCE,
    "cites": _CITES,
    "api": {"type": "string", "allowed": list(API_NAMES)},
    "note": _NOTE,
}

MODEL_ALIAS_SCHEMA: dict[str, Any] = {
    "alias": {"type": "string", "required": True, "empty": False},
    "model": {"type": "string", "required": True, "empty": False},
    "evidence": _EVIDENCE,
    "cites": _CITES,
    "note": _NOTE,
}

BASE_URL_ROUTE_SCHEMA: dict[str, Any] = {
    "suffix": {"type": "string", "required": True, "empty": False},
    "provider": {"type": "string", "required": True, "regex": PROVIDER_ID_PATTERN},
}

PROVIDER_SCHEMA: dict[str, Any] = {
    "api": {"type": "string", "required": True, "allowed": list(API_NAMES)},
    "tool_result_images": {"type": "boolean", "required": True},
    "evidence": _EVIDENCE,
    "cites": _CITES,
    "catalog": {"type": "string", "empty": False},
    "strip_variants": {
        "type": "list",
        "coerce": as_list,
        "schema": {"type": "string", "regex": r"^[a-z0-9][a-z0-9_-]*$"},
    },
    "profile_prefixes": {
        "type": "list",
        "coerce": as_list,
        "schema": {"type": "string", "regex": r"^[a-z0-9][a-z0-9_-]*\.$"},
    },
    "model_aliases": {"type": "list", "schema": {"type": "dict", "schema": MODEL_ALIAS_SCHEMA}},
    "base_url_routes": {
        "type": "list",
        "schema": {"type": "dict", "schema": BASE_URL_ROUTE_SCHEMA},
    },
    "aliases": {
        "type": "list",
        "coerce": as_list,
        "schema": {"type": "string", "regex": PROVIDER_ID_PATTERN},
    },
    "note": _NOTE,
    "models": {"type": "list", "schema": {"type": "dict", "schema": RULE_SCHEMA}},
    "runtime": {"type": "string", "allowed": list(RUNTIMES)},
    **limits_schema(),
}

MESSAGE_RULE_SCHEMA: dict[str, Any] = {
    "provider": {**_PATTERNS, "default": ["*"]},
    "model": {**_PATTERNS, "default": ["*"]},
    "user_after_tool": {
        "type": "string",
        "required": True,
        "allowed": [value for value in USER_AFTER_TOOL if value != "allowed"],
    },
    "evidence": _EVIDENCE,
    "cites": _CITES,
    "note": _NOTE,
}

VETO_SCHEMA: dict[str, Any] = {
    "provider": {**_PATTERNS, "default": ["*"]},
    "model": {**_PATTERNS, "default": ["*"]},
    "evidence": _EVIDENCE,
    "cites": _CITES,
    "note": _NOTE,
}

REGISTRY_SCHEMA: dict[str, Any] = {
    "registry": {"type": "string", "required": True, "coerce": strip_text, "empty": False},
    "version": {"type": ["string", "integer", "float"], "required": True},
    "description": {"type": "string"},
    "defaults": {
        "type": "dict",
        "default": {},
        "schema": {"api": {"type": "string", "allowed": list(API_NAMES)}},
    },
    "apis": {
        "type": "dict",
        "default": {},
        "schema": {name: {"type": "dict", "schema": API_SCHEMA} for name in API_NAMES},
    },
    "providers": {
        "type": "dict",
        "required": True,
        "keysrules": {"type": "string", "regex": PROVIDER_ID_PATTERN},
        "valuesrules": {"type": "dict", "schema": PROVIDER_SCHEMA},
    },
    "vetoes": {"type": "list", "default": [], "schema": {"type": "dict", "schema": VETO_SCHEMA}},
    "message_rules": {
        "type": "list",
        "default": [],
        "schema": {"type": "dict", "schema": MESSAGE_RULE_SCHEMA},
    },
}


def refine_registry_diagnostic(diagnostic: Diagnostic) -> Diagnostic:
    """Name the registry's own mistakes: unknown api or format, keys of a provider entry."""
    path = diagnostic.document_path
    if diagnostic.code == "unknown-value" and path[-1:] == ("api",):
        bad = diagnostic.message.split("`")[1]
        return recode(diagnostic, "unknown-api", f"unknown api `{bad}`", API_NAMES, bad)
    if diagnostic.code == "unknown-value" and "formats" in path:
        bad = diagnostic.message.split("`")[1]
        return recode(diagnostic, "unknown-format", f"unknown format `{bad}`", MEDIA_TYPES, bad)
    if diagnostic.code == "bad-type" and diagnostic.message.startswith("expected boolean,"):
        found = diagnostic.message.removeprefix("expected boolean,")
        return replace(diagnostic, message=f"expected true or false,{found}")
    if diagnostic.code == "unknown-value" and path[-1:] == ("evidence",):
        bad = diagnostic.message.split("`")[1]
        return recode(diagnostic, "unknown-evidence", f"unknown evidence `{bad}`", EVIDENCE, bad)
    if diagnostic.code == "unknown-key" and path[:1] == ("providers",) and len(path) in (3, 5):
        # Cerberus keeps a provider's schema under `valuesrules`, which the generic
        # suggestion code does not walk; suggest from the right schema here.
        keys = PROVIDER_SCHEMA if len(path) == 3 else _SECTION_SCHEMAS.get(str(path[2]), {})
        return recode(diagnostic, "unknown-key", diagnostic.message, tuple(keys), path[-1])
    return diagnostic


_SECTION_SCHEMAS: dict[str, dict[str, Any]] = {
    "models": RULE_SCHEMA,
    "model_aliases": MODEL_ALIAS_SCHEMA,
    "base_url_routes": BASE_URL_ROUTE_SCHEMA,
}


def place_registry_diagnostic(diagnostic: Diagnostic, loaded: LoadedYaml) -> Diagnostic:
    """Point at what the user must fix: a bad provider id at its key, not at its entry."""
    path = diagnostic.document_path
    if diagnostic.code == "bad-format" and len(path) == 2 and path[0] == "providers":
        return replace(diagnostic, location=loaded.location(path, key=True))
    if diagnostic.code == "bad-type" and not path:
        return replace(diagnostic, help="start from `policies/providers.yaml`")
    return diagnostic
