"""Resolving the four facts for a provider and model, and saying where each came from.

| fact      | first answer wins                                                                |
|-----------|----------------------------------------------------------------------------------|
| `mode`    | `agent.image_input_mode`, else `auto`                                            |
| `aux`     | `auxiliary.vision` names a backend (provider not blank/`auto`, or model/base_url)|
| `catalog` | `model.supports_vision` (main model) -> `providers.<p>.models.<m>.supports_vision` |
|           | -> the model catalog (routing variants stripped, floating aliases followed)      |
|           | -> `unknown`                                                                     |
| `path`    | a learned or probed verdict (`routes`) -> the provider registry, with the config's |
|           | `providers.<p>.tool_result_images` and `supports_vision` declarations             |

The inputs are immutable, so a resolution is memoized per (provider, model) as given: a
repeat costs one dictionary read. The memo is bounded; the oldest entry leaves first. The one
input that changes at run time, the routes overlay, is keyed into the memo by its version.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from .._vocabulary import Cell
from ._catalog import CatalogAnswer, ModelCatalog
from ._config import AgentConfig, ProviderDeclaration, Sourced
from ._keys import model_id, provider_key
from ._registry import ModelRef, ProviderRegistry, ProviderRoute
from ._routes import LearnedRoute, RouteOverlay

MEMO_SIZE: Final = 4096


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


class FactResolver:
    """Resolves facts from an agent config, a model catalog and a provider registry."""

    def __init__(
        self,
        config: AgentConfig,
        catalog: ModelCatalog,
        registry: ProviderRegistry,
        *,
        memo_size: int = MEMO_SIZE,
        routes: RouteOverlay | None = None,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.registry = registry
        self.routes = routes if routes is not None else RouteOverlay(None)
        self._routes_version = self.routes.version
        self._memo: dict[tuple[str, str], ResolvedFacts] = {}
        self._memo_size = max(1, memo_size)
        self._lock = threading.Lock()
        # A config may name a provider by an alias (`google` for `gemini`): index by registry id
        # too, the config's own spelling first.
        self._declarations = {
            registry.canonical(name): declaration
            for name, declaration in reversed(list(config.providers.items()))
        }
        self._declarations.update(config.providers)
        # Config warnings that concern every decision: all but those about one provider entry.
        self._global_warnings = tuple(
            warning
            for warning, diagnostic in zip(config.warnings, config.diagnostics, strict=True)
            if not (
                diagnostic.document_path[:1] == ("providers",) and len(diagnostic.document_path) > 2
            )
        )

    def resolve(self, provider: str, model: str) -> ResolvedFacts:
        """The facts for `provider` and `model` (memoized)."""
        if self.routes.refresh() != self._routes_version:
            self._routes_version = self.routes.version
            self.forget()
        key = (provider, model)
        found = self._memo.get(key)
        if found is not None:
            return found
        resolved = self._resolve(provider_key(provider), model_id(model))
        with self._lock:
            if len(self._memo) >= self._memo_size:
                del self._memo[next(iter(self._memo))]
            self._memo[key] = resolved
        return resolved

    def use_catalog(self, catalog: ModelCatalog) -> None:
        """Decide with another catalog from now on (a refreshed one); drops the memo."""
        self.catalog = catalog
        self.forget()

    def forget(self) -> None:
        """Drop every memoized resolution (after an input changed, e.g. a learned route)."""
        with self._lock:
            self._memo.clear()

    def declaration_for(self, provider: str) -> ProviderDeclaration | None:
        """What the config declares under `providers.<provider>` (by id or registry alias)."""
        name = provider_key(provider)
        return self._declarations.get(name) or self._declarations.get(self.registry.canonical(name))

    def learn(self, route: LearnedRoute) -> LearnedRoute:
        """Record a verdict in the routes overlay; later resolutions see it at once."""
        self.routes.record(route)
        self.forget()
        return route

    def locate(self, provider: str, model: str) -> ModelRef:
        """Where a provider and model sit in the registry, with the config's base URL."""
        name = provider_key(provider)
        return self.registry.locate(name, model, self.config.base_url_for(name))

    def _resolve(self, provider: str, model: str) -> ResolvedFacts:
        config = self.config
        declaration = self.declaration_for(provider)
        ref = self.locate(provider, model)
        catalog, catalog_line, answer, model_warnings, vision = self._catalog(
            ref, declaration, model
        )
        route = self.registry.route_ref(
            ref,
            declaration.override if declaration is not None else None,
            vision=catalog,
            declared_vision=vision.provenance if vision is not None and vision.value else None,
        )
        route = self._learned(route, ref)
        facts = {
            "mode": config.mode.value,
            "catalog": catalog,
            "aux": config.aux.value,
            "path": route.path,
        }
        provenance = {
            "mode": config.mode.provenance,
            "catalog": catalog_line,
            "aux": config.aux.provenance,
            "path": f"{route.source}: {route.reason}",
        }
        provider_warnings = declaration.warnings if declaration is not None else ()
        if self.routes.problem is not None:
            provider_warnings += (self.routes.problem,)
        return ResolvedFacts(
            provider=provider,
            model=model,
            facts=MappingProxyType(facts),
            provenance=MappingProxyType(provenance),
            warnings=self._global_warnings + provider_warnings + model_warnings,
            route=route,
            embed_target_bytes=config.embed_target_bytes.value,
            embed_target_provenance=config.embed_target_bytes.provenance,
            catalog_answer=answer,
            cell=(facts["mode"], catalog, facts["aux"], route.path),
        )

    def _learned(self, route: ProviderRoute, ref: ModelRef) -> ProviderRoute:
        """The route as the overlay settles it, when it holds a verdict for this model."""
        found = self.routes.find(ref.provider, ref.model, ref.matched)
        if found is None:
            return route
        return replace(
            route,
            accepts_tool_images=found.verdict == "accepts",
            reason=found.provenance,
            source=self.routes.label,
            evidence=found.how,
            cites="",
            where="",
            known=True,
        )

    def _catalog(
        self, ref: ModelRef, declaration: ProviderDeclaration | None, model: str
    ) -> tuple[str, str, CatalogAnswer | None, tuple[str, ...], Sourced[bool | None] | None]:
        """(fact, provenance, catalog answer, warnings, config declaration) for `catalog`."""
        main = self.config.main_vision_for(model)
        if main is not None and main.value is not None:
            return _vision(main.value), main.provenance, None, (), main
        declared = declaration.model_vision(model) if declaration is not None else None
        if declared is not None and declared.value is not None:
            return _vision(declared.value), declared.provenance, None, (), declared
        warnings = declared.warnings if declared is not None else ()
        answer, note = self._lookup(ref)
        return answer.verdict, self._catalog_line(answer, ref, note), answer, warnings, None

    def _lookup(self, ref: ModelRef) -> tuple[CatalogAnswer, str]:
        """The first catalog answer that knows the model, over the located ids in order."""
        answer, note = CatalogAnswer("unknown"), ""
        for candidate, how in ref.lookups:
            answer, note = self.catalog.lookup(ref.catalog, candidate), how
            if answer.verdict != "unknown":
                break
        return answer, "" if note == "exact id" else note

    def _catalog_line(self, answer: CatalogAnswer, ref: ModelRef, note: str) -> str:
        label = self.catalog.label
        if answer.verdict == "unknown":
            notes = "; ".join(ref.notes)
            extra = f"; {notes}" if notes else ""
            return f"{label}: `{ref.catalog}/{ref.model}` unknown ({answer.how}{extra})"
        hows = [how for how in (answer.how, note) if how and how != "exact id"]
        how = f" ({'; '.join(hows)})" if hows else ""
        return f"{label}: {answer.matched} input=[{', '.join(answer.inputs)}]{how}"


def _vision(value: bool) -> str:
    return "vision" if value else "no_vision"
