"""Resolving the four facts for a provider and model, and saying where each came from.

| fact      | first answer wins                                                                |
|-----------|----------------------------------------------------------------------------------|
| `mode`    | `agent.image_input_mode`, else `auto`                                            |
| `aux`     | `auxiliary.vision` names a backend (provider not blank/`auto`, or model/base_url)|
| `catalog` | `model.supports_vision` (main model) -> the provider's declaration              |
|           | (`providers.<p>.models.<m>` or its `custom_providers` entry) -> `model_overrides` |
|           | -> the local runtime, asked (Ollama, llama.cpp) -> the model catalog (routing    |
|           | variants stripped, floating aliases followed, input-preserving variants read as  |
|           | their base, vendor ids as gateways list them) -> `unknown`, with a did-you-mean  |
| `path`    | a learned or probed verdict (`routes`) -> the provider registry, with the config's |
|           | `providers.<p>.tool_result_images` and `supports_vision` declarations             |

The inputs are immutable, so a resolution is memoized per (provider, model) as given: a
repeat costs one dictionary read. The memo is bounded; the oldest entry leaves first. The one
input that changes at run time, the routes overlay, is keyed into the memo by its version.
The `catalog` fact is resolved in `_catalog_fact`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Final

from visiongate.kernel._suggest import closest

from .._vocabulary import FACT_NAMES, Cell
from ._catalog import ModelCatalog
from ._catalog_fact import Inputs, resolve_vision
from ._catalog_store import facts_cache_dir
from ._keys import model_id, provider_key
from ._pairs import ResolvedFacts as ResolvedFacts  # its home before (the tests import it)
from ._routes import LearnedRoute, RouteOverlay
from ._runtimes import RuntimeProbe
from .config._config import AgentConfig
from .config._providers import ProviderDeclaration
from .registry._registry import ModelRef, ProviderRegistry, ProviderRoute
from .registry._route import build

MEMO_SIZE: Final = 4096
NEAR_NAME: Final = 0.8
"""How close (difflib ratio) an unknown provider id must be to a known one to be a typo."""


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
        runtimes: RuntimeProbe | None = None,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.registry = registry
        self.routes = routes if routes is not None else RouteOverlay(None)
        self.runtimes = runtimes or RuntimeProbe(facts_cache_dir() / "runtimes.json")
        self._generation = 0
        self._vision_inputs: Inputs | None = None
        self._routes_version = self.routes.version
        # Ordered, so the oldest entry leaves in O(1): `del d[next(iter(d))]` on a plain dict
        # scans the holes earlier deletions left at its front.
        self._memo: OrderedDict[tuple[str, str], ResolvedFacts] = OrderedDict()
        self._memo_size = max(1, memo_size)
        self._lock = threading.Lock()
        # A config may name a provider by an alias (`google` for `gemini`): index by registry id
        # too, the config's own spelling first.
        self._declarations = {
            registry.canonical(name): declaration
            for name, declaration in reversed(list(config.providers.items()))
        }
        self._declarations.update(config.providers)
        self._global_warnings = config.decision_warnings
        # Per provider id as given to `_resolve` (normalised), what no model changes: its
        # declaration and base URL, and the did-you-mean for a provider nobody knows.
        self._providers: dict[str, _Provider] = {}

    def resolve(self, provider: str, model: str) -> ResolvedFacts:
        """The facts for `provider` and `model` (memoized)."""
        if self.routes.refresh() != self._routes_version:
            self._routes_version = self.routes.version
            self.forget()
        key = (provider, model)
        found = self._memo.get(key)
        if found is not None and (found.expires is None or time.time() < found.expires):
            return found
        generation = self._generation
        resolved = self._resolve(provider_key(provider), model_id(model))
        with self._lock:
            if generation != self._generation:
                return resolved  # an input changed meanwhile: do not keep the old answer
            if len(self._memo) >= self._memo_size and key not in self._memo:
                self._memo.popitem(last=False)
            self._memo[key] = resolved
        return resolved

    def _inputs(self) -> Inputs:
        """What the `catalog` fact reads, rebuilt only when the catalog (or the runtime probe)
        was swapped."""
        inputs = self._vision_inputs
        if (
            inputs is None
            or inputs.catalog is not self.catalog
            or inputs.runtimes is not self.runtimes
        ):
            inputs = Inputs(self.config, self.catalog, self.registry, self.runtimes)
            self._vision_inputs = inputs
        return inputs

    def use_catalog(self, catalog: ModelCatalog) -> None:
        """Decide with another catalog from now on (a refreshed one); drops the memo."""
        self.catalog = catalog
        self.forget()

    def forget(self) -> None:
        """Drop every memoized resolution (after an input changed, e.g. a learned route)."""
        with self._lock:
            self._generation += 1
            self._memo.clear()
            self._providers.clear()

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

    def _provider(self, provider: str) -> _Provider:
        found = self._providers.get(provider)
        if found is None:
            config, declaration = self.config, self.declaration_for(provider)
            declares = (
                config.main_vision is not None
                or bool(config.model_overrides)
                or (
                    declaration is not None
                    and bool(declaration.models or declaration.folded_models)
                )
            )
            found = _Provider(declaration, config.base_url_for(provider), declares)
            if len(self._providers) < MEMO_SIZE:  # bounded: provider ids come from callers
                self._providers[provider] = found
        return found

    def _resolve(self, provider: str, model: str) -> ResolvedFacts:
        config = self.config
        here = self._provider(provider)
        declaration = here.declaration
        ref = self.registry.locate(provider, model, here.base_url)
        reseller = declaration.catalog_provider if declaration is not None else None
        if reseller is not None:
            ref = _in_section(ref, reseller)
        vision = resolve_vision(self._inputs(), provider, ref, declaration, model, here.declares)
        catalog = vision.value
        declared = vision.declared
        route = self.registry.route_ref(
            ref,
            declaration.override if declaration is not None else None,
            vision=catalog,
            declared_vision=declared.provenance
            if declared is not None and declared.value
            else (vision.probed if catalog == "vision" else None),
        )
        if reseller is not None and declaration is not None and not route.known:
            route = self._resold(route, ref, declaration, reseller, catalog)
        route = self._learned(route, ref)
        cell, facts = _cell_facts(config.mode.value, catalog, config.aux.value, route.path)
        provenance = {
            "mode": config.mode.provenance,
            "catalog": vision.provenance,
            "aux": config.aux.provenance,
            "path": f"{route.source}: {route.reason}",
        }
        provider_warnings = declaration.warnings if declaration is not None else ()
        if not route.known and declaration is None:
            if here.suggestion is None:
                here.suggestion = self._provider_suggestion(provider)
            provider_warnings += here.suggestion
        if self.routes.problem is not None:
            provider_warnings += (self.routes.problem,)
        return build(
            ResolvedFacts,
            {
                "provider": provider,
                "model": model,
                "facts": facts,
                "provenance": MappingProxyType(provenance),
                "warnings": self._global_warnings + provider_warnings + vision.warnings,
                "route": route,
                "embed_target_bytes": config.embed_target_bytes.value,
                "embed_target_provenance": config.embed_target_bytes.provenance,
                "catalog_answer": vision.answer,
                "cell": cell,
                "expires": vision.expires,
            },
        )

    def _provider_suggestion(self, provider: str) -> tuple[str, ...]:
        """A did-you-mean warning for a provider neither the registry nor the catalog knows."""
        if provider in self.catalog.providers:
            return ()
        known = sorted({*self.registry.names, *self.catalog.providers})
        close = closest(provider, known, NEAR_NAME)
        if close is None:
            return ()
        return (
            f"provider `{provider}` is in neither {self.registry.label} nor the catalog, so "
            f"its route refuses: did you mean `{close}`?",
        )

    def _resold(
        self,
        route: ProviderRoute,
        ref: ModelRef,
        declaration: ProviderDeclaration,
        vendor: str,
        vision: str,
    ) -> ProviderRoute:
        """The route of a provider the registry does not list that the config declares a
        reseller of a catalogued vendor (`catalog_provider`): the vendor's verdict for the
        model, over the declared API (`api`, else the vendor's), never more than unverified."""
        sold = self.registry.route_ref(self.registry.locate(vendor, ref.model), vision=vision)
        if not self.registry.entries.get(sold.provider):
            return route  # a vendor the registry does not list either: the refusal stands
        api = sold.api
        if declaration.api is not None and declaration.api in self.registry.apis:
            api = declaration.api
        limits = self.registry.apis[api]
        reason = (
            f"{declaration.origin}.catalog_provider: `{vendor}`, resold; {vendor}'s route "
            f"over api {api}, unverified for the reseller: {sold.reason}"
        )
        return replace(
            sold,
            provider=route.provider,
            api=api,
            reason=reason,
            formats=limits.formats,
            max_image_base64=limits.max_image_base64,
            max_edge_px=limits.max_edge_px,
            max_images_per_request=limits.max_images_per_request,
            source=self.config.label,
            evidence="assumed",
            cites="",
            where="",
            known=True,
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


def _in_section(ref: ModelRef, section: str) -> ModelRef:
    """`ref` looked up in catalog section `section` (a reseller's `catalog_provider`)."""
    lookups = tuple(
        (section if where == ref.catalog else where, model, how)
        for where, model, how in ref.lookups
    )
    return replace(ref, catalog=section, lookups=lookups)


_CELLS: dict[Cell, tuple[Cell, Mapping[str, str]]] = {}


def _cell_facts(mode: str, catalog: str, aux: str, path: str) -> tuple[Cell, Mapping[str, str]]:
    """The cell and its facts as a mapping: one pair per cell, shared by every resolution that
    lands in it (there are 54, and what is not allocated need not be freed)."""
    cell = (mode, catalog, aux, path)
    found = _CELLS.get(cell)
    if found is None:
        found = (cell, MappingProxyType(dict(zip(FACT_NAMES, cell, strict=True))))
        if len(_CELLS) < 1024:  # bounded: an invalid mode in a config is a value too
            _CELLS[cell] = found
    return found


@dataclass
class _Provider:
    declaration: ProviderDeclaration | None
    base_url: str | None
    declares: bool
    """The config declares some model's vision (a main model, overrides, this provider's
    models): else no declaration needs to be looked up."""
    suggestion: tuple[str, ...] | None = None
    """The did-you-mean for a provider neither the registry nor the catalog knows (difflib
    over every known id: worth keeping), once it was needed."""
