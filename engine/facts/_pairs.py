"""The first decision's facts, kept between processes: one (provider, model) resolved with the
defaults (issue 37).

A `visiongate decide --provider X --model Y` resolves one pair and exits; with every input
the default one (the bundled catalog and registry, no agent config, no routes file) its
facts depend on those files only, so they are kept, and the next process for that pair
reads them back instead of loading the 800 KB catalog's table and the registry's.

- Keyed by the pair as given, the bundled catalog's and registry's path, size and
  modification time, `OLLAMA_HOST` and (in the entry's name) the engine's fingerprint, which
  holds the package version: another catalog, registry or engine meets another entry.
- Not kept, nor read, when a refreshed catalog or a routes file is there (what they say is
  read, and said, at each run), nor when an answer in the facts ages (a local runtime's).
- An entry of the fact tables (`_tables`), in their `pairs/` folder (the newest `MAX_PAIRS`
  kept): validated the same way, refused with one warning line when damaged (the facts are
  then resolved as if there were none and kept again).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ._tables import (
    BUNDLED_CATALOG,
    bundled_identity,
    default_routes_path,
    recall_entry,
    refreshed_path,
    remember_entry,
)
from .registry._route import BUNDLED_FILE as REGISTRY_FILE

if TYPE_CHECKING:
    from .._vocabulary import Cell
    from ._catalog_read import Verdict
    from .registry._route import ProviderRoute

__all__ = ["FOLDER", "MAX_PAIRS", "CatalogAnswer", "ResolvedFacts", "resolved_pair"]

FOLDER: Final = "pairs"
"""In the fact tables' folder, apart: many pairs never push the catalog's table out."""
MAX_PAIRS: Final = 256


# These two here rather than in `_catalog` and `_resolver`, which import the catalog's reader,
# the catalog store, the routes and the local runtimes' probe: reading a kept pair back needs
# none of them (issue 37).
@dataclass(frozen=True)
class CatalogAnswer:
    """What the catalog says about one model, and how the id was matched."""

    verdict: Verdict
    matched: str | None = None
    """`provider/model` of the entry that answered, e.g. `openrouter/deepseek/deepseek-v3.2`."""
    how: str = "not found"
    """`exact id`, `case-insensitive`, `without -cloud suffix`, ... or why it is unknown."""
    inputs: tuple[str, ...] = ()
    """The entry's `modalities.input`, for provenance."""


@dataclass(frozen=True)
class ResolvedFacts:
    """The four facts for one provider and model, with provenance and warnings."""

    provider: str
    """The provider as given, stripped and lower-cased."""
    model: str
    """The model as given, stripped."""
    facts: Mapping[str, str]
    """`mode`, `catalog`, `aux`, `path` -> value."""
    provenance: Mapping[str, str]
    """One line per fact: where its value came from."""
    warnings: tuple[str, ...]
    route: ProviderRoute
    embed_target_bytes: int | None
    """The byte budget from the config; None when not configured (the policy's value applies)."""
    embed_target_provenance: str
    """Where `embed_target_bytes` came from, e.g. `config.yaml: vision.embed_target_bytes: 1
    clamped to 65536 (...)`."""
    catalog_answer: CatalogAnswer | None
    """What the catalog said, when it was asked (the config did not answer first)."""
    cell: Cell
    """The facts as a decision-table cell: (mode, catalog, aux, path)."""
    expires: float | None = None
    """When a local runtime's answer in these facts stops being fresh (epoch seconds): the
    memo asks again after that. None: nothing here ages."""


def resolved_pair(provider: str, model: str, resolve: Callable[[], ResolvedFacts]) -> ResolvedFacts:
    """The facts of `provider` and `model` under the default inputs: from their entry when
    there is a sound one, else `resolve()` (kept for the next process when it may be)."""
    key = _key(provider, model)
    if key is None:
        return resolve()
    found = recall_entry(FOLDER, key, ResolvedFacts)
    if found is not None:
        return found
    resolved = resolve()
    if resolved.expires is None:
        remember_entry(FOLDER, key, resolved, MAX_PAIRS)
    return resolved


def _key(provider: str, model: str) -> bytes | None:
    """What the pair's facts depend on, or None when they are not to be kept."""
    if _exists(refreshed_path()) or _exists(default_routes_path()):
        return None
    catalog, registry = bundled_identity(BUNDLED_CATALOG), bundled_identity(REGISTRY_FILE)
    if catalog is None or registry is None:
        return None
    parts = ["pair", provider, model, catalog, registry, os.environ.get("OLLAMA_HOST")]
    return json.dumps(parts).encode("ascii")  # each part quoted: no two pairs share a key


def _exists(path: os.PathLike[str]) -> bool:
    # Anything there, even what cannot be read (that is said when it is read), or a stat
    # that fails: the facts are resolved.
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    return True
