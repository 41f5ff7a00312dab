"""Reading a model catalog file: its JSON, its entries (`provider/model` and its
`modalities.input`), its label and date, and what the indexes of a `ModelCatalog` (`_catalog`)
are built from (input-preserving variant suffixes, the typo skeletons of did-you-mean)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from .._diagnostics import Diagnostic, Location, PolicyError
from ._fetch import JsonTooDeep, parse_json
from ._keys import typo_keys
from ._tables import BUNDLED_CATALOG

BUNDLED_FILE: Final = BUNDLED_CATALOG
Verdict = Literal["vision", "no_vision", "unknown"]

CLOUD_SUFFIXES: Final = (":cloud", "-cloud")
_REVISION = re.compile(r"\b([0-9a-f]{7})[0-9a-f]{33}\b")
_STAMP = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


@dataclass(frozen=True)
class CatalogEntry:
    provider: str
    model: str
    inputs: tuple[str, ...]

    @property
    def verdict(self) -> Verdict:
        return "vision" if "image" in self.inputs else "no_vision"

    @property
    def path(self) -> str:
        return f"{self.provider}/{self.model}"


def read_document(text: str, file: str, walk: bool = True) -> Any:
    """The JSON document of a catalog's text; raise `PolicyError` (located) when it is not
    JSON or nests too deep (`walk`: check the nesting, for a file from outside)."""
    try:
        document = parse_json(text, walk=walk)
    except JsonTooDeep as error:
        raise PolicyError(
            [
                Diagnostic(
                    "catalog-json",
                    "error",
                    f"the catalog is {error}",
                    Location(file),
                    help="a catalog is a JSON file shaped like https://models.dev/api.json",
                )
            ]
        ) from None
    except json.JSONDecodeError as error:
        raise PolicyError(
            [
                Diagnostic(
                    "catalog-json",
                    "error",
                    f"the catalog is not valid JSON: {error.msg.lower()}",
                    Location(file, error.lineno, error.colno),
                    help="a catalog is a JSON file shaped like https://models.dev/api.json",
                )
            ]
        ) from error
    return document


def source_date(source: str) -> str:
    """The `YYYY-MM-DD` a catalog's `_source` line names (its revision's date), or ``."""
    found = _STAMP.search(_REVISION.sub("", source))
    return found.group(1) if found else ""


def label_of(source: str, file: str) -> str:
    revision = _REVISION.search(source)
    short = revision.group(1) if revision else ""
    date = source_date(source)
    of = f" of {date}" if date else ""
    if file == BUNDLED_FILE:
        return f"models.dev snapshot {short}".strip() + of
    return f"catalog {Path(file).name}" + (f" {short}" if short else "") + of


def _shape_error(file: str, message: str, path: tuple[str | int, ...] = ()) -> PolicyError:
    return PolicyError(
        [
            Diagnostic(
                "catalog-shape",
                "error",
                message,
                Location(file),
                path,
                help="a catalog is shaped like https://models.dev/api.json: "
                "{provider: {models: {model: {modalities: {input: [...]}}}}}",
            )
        ]
    )


def entries_of(document: Any, file: str) -> list[CatalogEntry]:
    if not isinstance(document, dict):
        raise _shape_error(file, "the catalog must be a JSON object of providers")
    entries: list[CatalogEntry] = []
    for provider, section in document.items():
        if provider.startswith("_"):
            continue
        entries.extend(_sectionentries_of(provider, section, file))
    if not entries:
        raise _shape_error(file, "the catalog lists no models with `modalities.input`")
    return entries


def _sectionentries_of(provider: str, section: Any, file: str) -> list[CatalogEntry]:
    models = section.get("models") if isinstance(section, dict) else None
    if not isinstance(models, dict):
        raise _shape_error(
            file, f"provider `{provider}` must be an object with a `models` object", (provider,)
        )
    entries = []
    for model, data in models.items():
        inputs = _inputs(data)
        if inputs is None:
            raise _shape_error(
                file,
                f"model `{provider}/{model}` has no `modalities.input` list",
                (provider, "models", model),
            )
        entries.append(CatalogEntry(provider.lower(), str(model), inputs))
    return entries


def _inputs(data: Any) -> tuple[str, ...] | None:
    modalities = data.get("modalities") if isinstance(data, dict) else None
    inputs = modalities.get("input") if isinstance(modalities, dict) else None
    if not isinstance(inputs, list) or not all(isinstance(item, str) for item in inputs):
        return None
    return tuple(inputs)


MIN_VARIANT_PAIRS: Final = 2
"""How many (variant, base) pairs must list the same input, and none differ, for a variant
suffix to be read as its base model."""


def preserving_variants(exact: Mapping[tuple[str, str], CatalogEntry]) -> dict[str, int]:
    agree: dict[str, int] = {}
    differ: set[str] = set()
    for (provider, model), entry in exact.items():
        base, colon, suffix = model.rpartition(":")
        found = exact.get((provider, base)) if colon and base else None
        if found is None:
            continue
        if found.inputs == entry.inputs:
            agree[suffix.lower()] = agree.get(suffix.lower(), 0) + 1
        else:
            differ.add(suffix.lower())
    return {s: n for s, n in sorted(agree.items()) if n >= MIN_VARIANT_PAIRS and s not in differ}


def near_index(entries: Iterable[CatalogEntry]) -> dict[str, dict[str, tuple[str, ...]]]:
    index: dict[str, dict[str, list[str]]] = {}
    for entry in entries:
        for skeleton in typo_keys(entry.model):
            for section in (entry.provider, "*"):
                index.setdefault(section, {}).setdefault(skeleton, []).append(entry.model)
    return {
        section: {key: tuple(dict.fromkeys(ids)) for key, ids in table.items()}
        for section, table in index.items()
    }
