"""Which `_meta` keys MCP reserves for the protocol, under both published prefix rules.

A key is `prefix/name` or a bare `name`; the prefix is dot-separated labels. The two spec
versions disagree on which prefixes are reserved, and a server may speak either, so a key
reserved by either rule is reserved here:

- 2025-06-18: zero or more labels, then `modelcontextprotocol` or `mcp`, then any label
  (`modelcontextprotocol.io/`, `mcp.dev/`, `api.modelcontextprotocol.org/`, `tools.mcp.com/`);
- 2025-11-25: the second label is `modelcontextprotocol` or `mcp` (`io.modelcontextprotocol/`,
  `dev.mcp/`, `org.modelcontextprotocol.api/`, `com.mcp.tools/`; not `com.example.mcp/`).

Bare names are reserved only when listed in the policy (`progressToken`, ...).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from visiongate.engine import SanitizeSettings

__all__ = [
    "MetaKeyVerdict",
    "classify_meta_key",
    "is_reserved_meta_key",
    "reserved_by_2025_06_18",
    "reserved_by_2025_11_25",
]

MetaKeyVerdict = Literal[
    "vendor",
    "reserved_name",
    "reserved_prefix_2025_06_18",
    "reserved_prefix_2025_11_25",
]


@dataclass(frozen=True)
class _KeyRules:
    labels: frozenset[str]
    names: frozenset[str]


def classify_meta_key(key: str, settings: SanitizeSettings) -> MetaKeyVerdict:
    """Why `key` is reserved, or `vendor` when it may reach the model.

    Keys are not checked for syntax first. A key whose prefix breaks the label grammar cannot
    be a genuine protocol key, so no client acts on it and it passes as a vendor key; but its
    labels are still matched, so a look-alike such as `1io.mcp/x` or `IO.MCP/x` is dropped
    rather than shown to the model as if the protocol had said it. Labels and names compare
    after NFKC, case folding and trimming for the same reason.
    """
    rules = _key_rules(settings)
    prefix, slash, name = key.partition("/")
    if not slash or not prefix.strip():
        # No prefix, or an empty one (`/progressToken`): the name alone decides.
        return _by_name(name if slash else key, rules)
    labels = tuple(_normal(label) for label in prefix.split("."))
    if reserved_by_2025_11_25(labels, rules.labels):
        return "reserved_prefix_2025_11_25"
    if reserved_by_2025_06_18(labels, rules.labels):
        return "reserved_prefix_2025_06_18"
    # The policy may also list whole prefixed keys.
    return _by_name(key, rules)


def is_reserved_meta_key(key: str, settings: SanitizeSettings) -> bool:
    """Whether the protocol reserves `key` (it is then never shown to the model)."""
    return classify_meta_key(key, settings) != "vendor"


def reserved_by_2025_06_18(labels: tuple[str, ...], reserved: frozenset[str]) -> bool:
    """A reserved label followed by at least one more label, at any position."""
    return any(label in reserved for label in labels[:-1])


def reserved_by_2025_11_25(labels: tuple[str, ...], reserved: frozenset[str]) -> bool:
    """The second label is reserved."""
    return len(labels) >= 2 and labels[1] in reserved


@lru_cache(maxsize=16)
def _key_rules(settings: SanitizeSettings) -> _KeyRules:
    return _KeyRules(
        labels=frozenset(_normal(label) for label in settings.reserved_meta_labels),
        names=frozenset(_normal(name) for name in settings.reserved_meta_keys),
    )


def _by_name(name: str, rules: _KeyRules) -> MetaKeyVerdict:
    return "reserved_name" if _normal(name) in rules.names else "vendor"


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()
