"""The JSON Schemas of the command line's `--json` outputs, shipped in the package.

Each output carries `schema_version`; its schema is `visiongate/schemas/<name>.json`, whose
`$id` is `urn:visiongate:schema:<name>`. A change that removes or retypes a field raises the
output's version; a new field does not.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Final

SCHEMA_VERSIONS: Final[dict[str, int]] = {
    "decision-record": 1,
    "route-output": 1,
    "explain": 1,
    "diff": 1,
    "lint-report": 1,
    "test-report": 1,
    "registry-show": 1,
    "catalog-update": 1,
    "catalog-show": 1,
    "routes-list": 1,
    "probe": 1,
    "rule": 1,
    "version": 1,
    "audit": 2,
}
"""Output name -> the `schema_version` it carries."""


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one output, e.g. `load_schema("lint-report")`."""
    if name not in SCHEMA_VERSIONS:
        raise KeyError(f"no schema named `{name}`")
    text = (resources.files("visiongate") / "schemas" / f"{name}.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
