"""The model catalog: does a model take images as input, according to models.dev?

The catalog is any file in the shape of models.dev's public `api.json`:
`{provider_id: {id, name, models: {model_id: {id, name, modalities: {input: [...]}}}}}`.
A model sees images iff `"image"` is in `modalities.input`. Every index is built once at
load, so a look-up is a handful of dictionary reads.

Look-up order, first hit wins:

1. the provider's own section: the exact id, then case-insensitively, then the id without a
   `:cloud` / `-cloud` suffix (Ollama names its hosted models `gpt-oss:120b-cloud`, the
   catalog lists `gpt-oss:120b`);
2. when the provider is not in the catalog or its section does not list the model, the same
   three steps over every provider, but only if all providers that list the id agree: a
   proxy alias that one vendor maps to a vision model and another to a text model is
   `unknown`, never a guess.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from .._yaml import read_source_file
from ._catalog_read import (
    BUNDLED_FILE,
    CLOUD_SUFFIXES,
    CatalogEntry,
    Verdict,
    entries_of,
    label_of,
    near_index,
    preserving_variants,
    read_document,
    source_date,
)
from ._keys import model_id, model_key, provider_key, similarity, typo_key
from ._pairs import CatalogAnswer as CatalogAnswer  # defined beside the kept pairs
from .registry._route import build


@dataclass(frozen=True)
class _Group:
    """Every entry, across providers, that shares one id (or one lower-cased id)."""

    entries: tuple[CatalogEntry, ...]
    agreed: Verdict | None
    """The verdict all entries share, None when they disagree."""

    @classmethod
    def of(cls, entries: list[CatalogEntry]) -> _Group:
        # Built without the frozen `__init__`: a catalog makes one group per id, twice (~10k).
        first = entries[0].verdict
        agreed = first if all(entry.verdict == first for entry in entries[1:]) else None
        return build(cls, {"entries": tuple(entries), "agreed": agreed})


Index = Mapping[tuple[str, str], CatalogEntry]
_NO_IDS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType({})
Candidates = tuple[tuple[str, str], ...]
"""(id to try, how it was derived), in order."""


@dataclass(frozen=True, eq=False)
class ModelCatalog:
    """A loaded catalog with its look-up indexes. Immutable; share one per process."""

    source: str
    """The `_source` line of the file (catalog name, licence, revision), or the file name."""
    label: str
    """Short name for provenance lines, e.g. `models.dev snapshot f3fc692`."""
    providers: frozenset[str]
    model_count: int
    _exact: Index
    _folded: Index
    _global_exact: Mapping[str, _Group]
    _global_folded: Mapping[str, _Group]
    variants: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Variant suffixes (`free` for `:free`) whose every (variant, base) pair in this catalog
    lists the same input as its base, with the number of such pairs: a variant the catalog
    does not list is read as its base model."""
    _near: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    """Built on the first did-you-mean: section (or `*`) -> skeleton -> ids."""
    _unknown: dict[str, CatalogAnswer] = field(default_factory=dict)
    """The answer for a model nobody lists, per section asked (it names only the section)."""
    date: str = ""
    """`YYYY-MM-DD` of the catalog's revision (bundled) or fetch (refreshed), when known."""
    origin: str = "file"
    """`bundled`, `refreshed` (fetched by `visiongate catalog update`) or `file`."""

    @classmethod
    def bundled(cls) -> ModelCatalog:
        """The snapshot shipped in `policies/catalog/models-dev.json` (loaded once)."""
        return _bundled_catalog()

    @classmethod
    def empty(cls, label: str = "no catalog") -> ModelCatalog:
        """A catalog that knows no model (every look-up is `unknown`)."""
        nothing: Mapping[Any, Any] = MappingProxyType({})
        return cls(f"<{label}>", label, frozenset(), 0, nothing, nothing, nothing, nothing)

    @classmethod
    def from_file(cls, path: str | Path) -> ModelCatalog:
        """Load any api.json-shaped file; raise `PolicyError` when it cannot be read or used."""
        return cls.from_text(read_source_file(path, kind="model catalog"), str(path))

    @classmethod
    def from_text(
        cls, text: str, file: str = "<catalog>", label: str = "", origin: str = "file"
    ) -> ModelCatalog:
        # The bundled snapshot is the package's own: only an outside file is walked.
        document = read_document(text, file, walk=origin != "bundled")
        return cls.from_document(document, file, label, origin)

    @classmethod
    def from_document(
        cls, document: Any, file: str = "<catalog>", label: str = "", origin: str = "file"
    ) -> ModelCatalog:
        """Build from a parsed api.json document; raise `PolicyError` for a wrong shape."""
        entries = entries_of(document, file)
        source = document.get("_source") if isinstance(document.get("_source"), str) else file
        catalog = _build(entries, str(source), label or label_of(str(source), file))
        return replace(catalog, date=source_date(str(source)), origin=origin)

    def section(self, provider: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The models a provider's section lists, with their `modalities.input`, sorted."""
        name = provider_key(provider)
        return tuple(
            (entry.model, entry.inputs)
            for (owner, _), entry in sorted(self._exact.items())
            if owner == name
        )

    def model_paths(self) -> frozenset[str]:
        """Every `provider/model` the catalog lists."""
        return frozenset(entry.path for entry in self._exact.values())

    def inputs_by_path(self) -> dict[str, tuple[str, ...]]:
        """Every `provider/model` the catalog lists, with its `modalities.input`."""
        return {entry.path: entry.inputs for entry in self._exact.values()}

    def lookup(self, provider: str, model: str) -> CatalogAnswer:
        """What the catalog says about `model` as served by `provider` (see module docs)."""
        model = model_id(model)
        return self._answer(provider_key(provider), model, self._candidates(model))

    def first_known(self, lookups: Iterable[tuple[str, str, str]]) -> tuple[CatalogAnswer, str]:
        """Over (section, model id, how the id was derived) look-ups in order: the first
        answer that knows the model, with its `how`; else the last look-up's answer. An id
        nobody lists in any spelling (most never-seen ones) costs a set test."""
        listed = self._global_folded
        answer: CatalogAnswer | None = None
        section = how = None
        for section, candidate, how in lookups:
            model = model_id(candidate)
            folded = model.lower()
            if folded not in listed and (
                # `_only_itself`, its answer for an id without a colon spelled out: most are
                (":" not in model and not folded.endswith(CLOUD_SUFFIXES))
                or self._only_itself(folded)
            ):
                answer = None  # unlisted, and no suffix to strip: it has no candidate
                continue
            candidates = self._candidates(model)
            answer = self._answer(provider_key(section), model, candidates) if candidates else None
            if answer is not None and answer.verdict != "unknown":
                return answer, how
        if section is None or how is None:
            return CatalogAnswer("unknown"), ""
        return answer or self._nobody(provider_key(section)), how

    def _answer(self, provider: str, model: str, candidates: Candidates) -> CatalogAnswer:
        if not candidates:  # nobody lists the id in any spelling
            return self._nobody(provider)
        if provider in self.providers:
            found = self._in_section(provider, candidates)
            if found is not None:
                return found
        return self._across_providers(provider, model, candidates)

    def near(self, provider: str, model: str) -> str | None:
        """A listed id close to `model` (a typo: a doubled or dropped letter, a vowel, a
        separator), in the provider's section, else in any; None when there is none."""
        if not self._near:
            self._near.update(near_index(self._exact.values()))
        skeleton = typo_key(model)
        if skeleton not in self._near.get("*", _NO_IDS):  # `*` has every section's skeletons
            return None
        for section in (provider_key(provider), "*"):
            found = self._near.get(section, _NO_IDS).get(skeleton)
            if not found:  # nearly every unknown id: nothing shares its skeleton
                continue
            folded = model_key(model)
            close = [item for item in found if model_key(item) != folded]
            if close:
                return max(close, key=lambda item: similarity(item, model))
        return None

    def _candidates(self, model: str) -> Candidates:
        """The ids to try, in order, with how each one was derived: the id itself first (the
        catalog's own entry wins), then the id without a cloud suffix or input-preserving
        variant suffix. Only ids some section lists, in some case, are kept: the others
        cannot match, and a model nobody lists has none."""
        listed = self._global_folded
        folded = model.lower()
        if self._only_itself(folded):  # nearly every id
            return ((model, "exact id"),) if folded in listed else ()
        found = [(model, "exact id")] if folded in listed else []
        for suffix in CLOUD_SUFFIXES:
            if folded.endswith(suffix) and len(model) > len(suffix):
                stripped = model[: -len(suffix)]
                if stripped.lower() in listed:
                    found.append((stripped, f"without {suffix} suffix"))
        base, colon, suffix = model.rpartition(":")
        pairs = self.variants.get(suffix.lower(), 0) if colon and base else 0
        if pairs and base.lower() in listed:
            found.append(
                (
                    base,
                    f"`:{suffix}` variant read as `{base}`: in this catalog the {pairs} "
                    f"`:{suffix}` variants listed have their base model's input",
                )
            )
        return tuple(found)

    def _only_itself(self, folded: str) -> bool:
        """Whether an id (lower-cased) is its only candidate: it has no cloud suffix, and no
        variant suffix whose base model some section lists."""
        if folded.endswith(CLOUD_SUFFIXES):
            return False
        base, colon, suffix = folded.rpartition(":")  # ("", "", id) without a colon
        return not (colon and base and suffix in self.variants and base in self._global_folded)

    def _in_section(self, provider: str, candidates: Candidates) -> CatalogAnswer | None:
        for candidate, how in candidates:
            entry = self._exact.get((provider, candidate))
            if entry is not None:
                return _answer(entry, how)
            entry = self._folded.get((provider, candidate.lower()))
            if entry is not None:
                return _answer(entry, _folded_how(how))
        return None

    def _across_providers(self, provider: str, model: str, candidates: Candidates) -> CatalogAnswer:
        listed = provider in self.providers
        for candidate, how in candidates:
            group = self._global_exact.get(candidate)
            if group is not None:
                return _global_answer(group, how, listed, provider)
            group = self._global_folded.get(candidate.lower())
            if group is not None:
                return _global_answer(group, _folded_how(how), listed, provider)
        return self._nobody(provider)

    def _nobody(self, provider: str) -> CatalogAnswer:
        """The answer for a model no section lists: it names only the section asked, so one
        answer per section serves every such model."""
        found = self._unknown.get(provider)
        if found is None:
            where = f"not in `{provider}` nor" if provider in self.providers else "not"
            found = _answer_of("unknown", None, f"{where} in any provider's section", ())
            if len(self._unknown) < 1024:  # bounded: sections come from callers
                self._unknown[provider] = found
        return found


def _folded_how(how: str) -> str:
    return "case-insensitive" if how == "exact id" else f"{how}, case-insensitive"


def _answer(entry: CatalogEntry, how: str) -> CatalogAnswer:
    return _answer_of(entry.verdict, entry.path, how, entry.inputs)


def _global_answer(group: _Group, how: str, listed: bool, provider: str) -> CatalogAnswer:
    first = group.entries[0]
    count = len(group.entries)
    where = f"not in `{provider}`; " if listed else ""
    if group.agreed is None:
        vision = sum(1 for entry in group.entries if entry.verdict == "vision")
        return CatalogAnswer(
            "unknown",
            None,
            f"{where}{how} in {count} providers that disagree "
            f"({vision} with image input, {count - vision} without)",
        )
    agree = "the only provider listing it" if count == 1 else f"all {count} providers agree"
    return _answer_of(group.agreed, first.path, f"{where}{how}, {agree}", first.inputs)


def _answer_of(
    verdict: Verdict, matched: str | None, how: str, inputs: tuple[str, ...]
) -> CatalogAnswer:
    return build(
        CatalogAnswer, {"verdict": verdict, "matched": matched, "how": how, "inputs": inputs}
    )


_order: Final = operator.attrgetter("provider", "model")


def _build(entries: list[CatalogEntry], source: str, label: str) -> ModelCatalog:
    exact: dict[tuple[str, str], CatalogEntry] = {}
    folded: dict[tuple[str, str], CatalogEntry] = {}
    by_id: dict[str, list[CatalogEntry]] = {}
    by_folded: dict[str, list[CatalogEntry]] = {}
    # Sorted, so the entry named in provenance and any collision winner are deterministic.
    for entry in sorted(entries, key=_order):
        provider, model = entry.provider, entry.model
        lowered = model.lower()
        exact[(provider, model)] = entry
        folded.setdefault((provider, lowered), entry)
        by_id.setdefault(model, []).append(entry)
        by_folded.setdefault(lowered, []).append(entry)
    return ModelCatalog(
        source=source,
        label=label,
        providers=frozenset(entry.provider for entry in entries),
        model_count=len(entries),
        variants=MappingProxyType(preserving_variants(exact)),
        # Plain dicts, never handed out: a mapping proxy's `get` costs a method look-up on
        # the dict behind it, and these are read several times per never-seen model.
        _exact=exact,
        _folded=folded,
        _global_exact={key: _Group.of(group) for key, group in by_id.items()},
        _global_folded={key: _Group.of(group) for key, group in by_folded.items()},
    )


@functools.lru_cache(maxsize=1)
def _bundled_catalog() -> ModelCatalog:
    from ._tables import cached_bundled_table

    def load(text: str) -> ModelCatalog:
        return ModelCatalog.from_text(text, BUNDLED_FILE, origin="bundled")

    # Kept whole, indexes and all: unpickling them takes about a third of rebuilding them
    # from the entries (10 against 28 ms, measured by clilean), most of a warm `decide`.
    return cached_bundled_table("catalog bundled", BUNDLED_FILE, load, ModelCatalog)
