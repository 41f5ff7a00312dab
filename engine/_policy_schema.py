"""The cerberus schema of a policy file, built from the engine's vocabulary."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._diagnostics import Diagnostic
from ._settings import (
    INVISIBLE_CHANNELS,
    INVISIBLE_MODES,
    LEGACY_BOOLEAN_CHANNELS,
    LONE_IMAGES,
    TALL_IMAGES,
)
from ._validate import as_list, recode, strip_text
from ._vocabulary import FACTS, HIT_POLICIES, LANES, SOURCES, TEXT_ACTIONS, USER_ONLY

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
LINT_LEVELS = ("error", "warning", "info", "ignore")

MAX_RULES = 2_000
"""Rules (and invariants) in one policy. Compilation is linear in the rules, but the
linter's table checks are not: at 2,000 rules a full lint takes seconds."""
MAX_NAME = 128
MAX_TEXT = 4_096

_ID: dict[str, Any] = {
    "type": "string",
    "required": True,
    "regex": NAME_PATTERN,
    "maxlength": MAX_NAME,
}
_TEXT: dict[str, Any] = {"type": "string", "coerce": strip_text, "maxlength": MAX_TEXT}


def _when_schema() -> dict[str, Any]:
    return {
        fact: {
            "type": "list",
            "coerce": as_list,
            "empty": False,
            "schema": {"type": "string", "allowed": list(domain)},
        }
        for fact, domain in FACTS.items()
    }


def _native_schema() -> dict[str, Any]:
    return {
        "max_images": {"type": "integer", "min": 1, "max": 100},
        "candidates": {"type": "integer", "min": 1, "max": 1000},
        "embed_target_bytes": {"type": "integer", "min": 1},
        "max_edge_px": {"type": "integer", "min": 64, "max": 8000},
        "tall_images": {"type": "string", "allowed": list(TALL_IMAGES)},
        "legibility_scale": {"type": "number", "min": 0.05, "max": 1.0},
        "lone_image": {"type": "string", "allowed": list(LONE_IMAGES)},
    }


def _invisible_mode(channel: str) -> dict[str, Any]:
    if channel in LEGACY_BOOLEAN_CHANNELS:
        return {"type": ["string", "boolean"], "allowed": [*INVISIBLE_MODES, True, False]}
    return {"type": "string", "allowed": list(INVISIBLE_MODES)}


RULE_SCHEMA: dict[str, Any] = {
    "id": _ID,
    "when": {"type": "dict", "default": {}, "schema": _when_schema()},
    "lane": {"type": "string", "required": True, "allowed": list(LANES)},
    "reason": {**_TEXT, "required": True, "empty": False},
    "description": _TEXT,
}

INVARIANT_SCHEMA: dict[str, Any] = {
    "id": _ID,
    "when": {"type": "dict", "default": {}, "schema": _when_schema()},
    "expect": {"type": "string", "required": True, "allowed": list(LANES)},
    "description": _TEXT,
}

EXECUTION_SCHEMA: dict[str, Any] = {
    "native": {
        "type": "dict",
        "schema": {
            **_native_schema(),
            "sources": {
                "type": "dict",
                "keysrules": {"type": "string", "allowed": list(SOURCES)},
                "valuesrules": {"type": "dict", "schema": _native_schema()},
            },
        },
    },
    "text": {
        "type": "dict",
        "schema": {source: {"type": "string", "allowed": list(TEXT_ACTIONS)} for source in SOURCES},
    },
    "keep_recent_images": {"type": "integer", "min": 1, "max": 1000},
    "max_calls_per_image": {"type": "integer", "min": 1, "max": 1000},
    "user_only": {"type": "string", "allowed": list(USER_ONLY)},
}

SANITIZE_SCHEMA: dict[str, Any] = {
    "tags": {
        "type": "dict",
        "schema": {
            "allowed_flags": {
                "type": "list",
                "schema": {"type": "string", "regex": r"^[a-z0-9]{2,32}$"},
            }
        },
    },
    "invisible": {
        "type": "dict",
        "schema": {channel: _invisible_mode(channel) for channel in INVISIBLE_CHANNELS},
    },
    "meta": {
        "type": "dict",
        "schema": {
            "reserved_labels": {
                "type": "list",
                "schema": {"type": "string", "regex": r"^[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?$"},
            },
            "reserved_keys": {"type": "list", "schema": {"type": "string", "empty": False}},
        },
    },
}

POLICY_SCHEMA: dict[str, Any] = {
    "policy": _ID,
    "version": {
        "type": ["string", "integer", "float"],
        "required": True,
        "coerce": strip_text,
        "empty": False,
        "maxlength": MAX_NAME,
    },
    "description": {**_TEXT, "required": True, "empty": False},
    "hit_policy": {"type": "string", "required": True, "allowed": list(HIT_POLICIES)},
    "default": {"type": "string", "required": True, "allowed": list(LANES)},
    "rules": {
        "type": "list",
        "required": True,
        "maxlength": MAX_RULES,
        "schema": {"type": "dict", "schema": RULE_SCHEMA},
    },
    "invariants": {
        "type": "list",
        "default": [],
        "maxlength": MAX_RULES,
        "schema": {"type": "dict", "schema": INVARIANT_SCHEMA},
    },
    "drops_invariants": {
        "type": "list",
        "default": [],
        "maxlength": MAX_RULES,
        "schema": {"type": "string", "regex": NAME_PATTERN, "maxlength": MAX_NAME},
    },
    "execution": {"type": "dict", "default": {}, "schema": EXECUTION_SCHEMA},
    "sanitize": {"type": "dict", "default": {}, "schema": SANITIZE_SCHEMA},
    "lint": {
        "type": "dict",
        "schema": {
            "severity": {
                "type": "dict",
                "keysrules": {"type": "string"},
                "valuesrules": {"type": "string", "allowed": list(LINT_LEVELS)},
            },
            "fail_level": {"type": "string", "allowed": ["error", "warning", "info"]},
        },
    },
}


def refine_policy_diagnostic(diagnostic: Diagnostic) -> Diagnostic:
    """Give vocabulary mistakes their own codes: unknown facts, fact values and lanes."""
    path = diagnostic.document_path
    in_when = len(path) >= 4 and path[0] in ("rules", "invariants") and path[2] == "when"
    if diagnostic.code == "unknown-key" and in_when:
        return recode(diagnostic, "unknown-fact", f"unknown fact `{path[3]}`", list(FACTS), path[3])
    if diagnostic.code == "unknown-value" and in_when:
        fact = str(path[3])
        bad = diagnostic.message.split("`")[1]
        return recode(
            diagnostic,
            "unknown-fact-value",
            f"`{bad}` is not a value of fact `{fact}`",
            list(FACTS[fact]),
            bad,
        )
    if diagnostic.code == "too-large" and path == ("rules",):
        return replace(
            diagnostic,
            code="too-many-rules",
            message=f"a policy holds at most {MAX_RULES:,} rules",
            help="merge rules with the same lane, or split the policy; "
            "the decision table has only a few dozen cells",
        )
    is_lane = path[-1:] in (("lane",), ("expect",), ("default",))
    if diagnostic.code == "unknown-value" and is_lane:
        bad = diagnostic.message.split("`")[1]
        return recode(diagnostic, "unknown-lane", f"unknown lane `{bad}`", list(LANES), bad)
    return diagnostic
