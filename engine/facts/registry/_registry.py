"""The provider registry: does an image inside a tool result reach this provider and model?

The registry is data (`policies/providers.yaml`), validated like a policy (`_load`).
Every verdict carries its evidence: `documented`, `field` or `assumed` in the file, and
`declared` when the agent config says so. A verdict `accepts` is the `path` fact `accepts`
only on trusted evidence (`TRUSTED_EVIDENCE`), else `unverified`; `refuses` is always
`refuses`. A route is resolved in this order, first answer wins (the file's header says the
same; a learned or probed verdict comes before all of this, in the fact resolver):

1. a matching veto refuses a route that would otherwise accept, even one the agent config
   declares (the route's reason then names the veto);
2. the agent config's declaration for the provider (`ProviderOverride`), when given;
3. the provider's model rules, in order; 4. the provider's own answer;
5. an unknown provider refuses, unless the config declares its model `supports_vision: true`
   (then `unverified`, as the production agent opens such routes): errors and gaps never
   open the native lane.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from visiongate.kernel.shapes import API_NAMES

from ..._diagnostics import Diagnostic, PolicyError, has_errors
from ..._yaml import read_source_file
from .._keys import model_id, provider_key
from ._answers import (
    Answer,
    Applicable,
    as_gateways_list,
    entry_answer,
    first_match,
    own_answer,
    profile_lookups,
    route_of,
    rule_blocks,
    strip_variants,
    unknown_answer,
)
from ._route import BUNDLED_FILE, TRUSTED_EVIDENCE, ProviderRoute, path_of, weaker
from ._types import (
    MEDIA_TYPES,
    Entry,
    Evidence,
    Limits,
    MessageRule,
    ModelRef,
    Patterns,
    ProviderOverride,
    RegistryTables,
    Veto,
    build,
    limits_with,
)

__all__ = [
    "API_NAMES",
    "MEDIA_TYPES",
    "TRUSTED_EVIDENCE",
    "ModelRef",
    "ProviderOverride",
    "ProviderRegistry",
    "ProviderRoute",
    "analyze_registry_text",
    "path_of",
]


@dataclass(frozen=True, eq=False)
class ProviderRegistry:
    """A validated registry. Immutable; `route` is a pure function of it and its inputs."""

    file: str
    label: str
    """The file name provenance lines cite, e.g. `providers.yaml`."""
    default_api: str
    apis: Mapping[str, Limits]
    entries: Mapping[str, Entry]
    names: Mapping[str, str]
    """Every id and alias -> the registry id."""
    vetoes: tuple[Veto, ...] = ()
    message_rules: tuple[MessageRule, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    _applicable: dict[str, Applicable] = field(default_factory=dict, repr=False)
    _limits: dict[tuple[str, str], Limits] = field(default_factory=dict, repr=False)
    _located: dict[tuple[str, str | None], tuple[str, Entry | None]] = field(
        default_factory=dict, repr=False
    )
    _owners: dict[str, Entry | None] = field(default_factory=dict, repr=False)
    _shared_routes: dict[tuple[str, bool, int], dict[str, object]] = field(
        default_factory=dict, repr=False
    )
    """A provider's route for a model its own answer decides (a message rule may apply), less
    the model: the fields every such route shares (see `_shared_route`)."""

    @classmethod
    def bundled(cls) -> ProviderRegistry:
        """The registry shipped in `policies/providers.yaml` (loaded once)."""
        return _bundled_registry()

    @classmethod
    def from_file(cls, path: str | Path) -> ProviderRegistry:
        return cls.from_text(read_source_file(path, kind="provider registry"), str(path))

    @classmethod
    def of(cls, tables: RegistryTables) -> ProviderRegistry:
        """The registry made of what the loader read."""
        return cls(**vars(tables))  # the same fields, the caches left empty

    @classmethod
    def from_text(cls, text: str, file: str = "<registry>") -> ProviderRegistry:
        """Load and validate a registry; raise `PolicyError` carrying every diagnostic."""
        registry, diagnostics = analyze_registry_text(text, file)
        if registry is None or has_errors(diagnostics):
            raise PolicyError(diagnostics)
        return registry

    def canonical(self, provider: str) -> str:
        """The registry id for a provider id or alias (normalized), else the normalized input."""
        name = provider_key(provider)
        return self.names.get(name, name)

    def locate(self, provider: str, model: str, base_url: str | None = None) -> ModelRef:
        """Where a provider and model sit in the registry (see `ModelRef`)."""
        key = (provider, base_url)
        found = self._located.get(key)
        if found is None:
            name = self._endpoint(self.canonical(provider), base_url)
            found = (name, self.entries.get(name))
            if len(self._located) < 1024:  # bounded: provider ids come from callers
                self._located[key] = found
        name, entry = found
        model = model_id(model)
        stripped = model
        notes: tuple[str, ...] = ()
        if entry is not None:
            if entry.strip_variants and ":" in model:
                stripped, notes = strip_variants(model, entry.strip_variants)
            alias = entry.alias_for(stripped) if entry.model_aliases else None
        else:
            alias = None
        catalog = entry.catalog if entry is not None else name
        lookups = [(catalog, stripped, notes[0] if notes else "exact id")]
        if alias is not None:
            notes += (f"`{alias.alias}` points at `{alias.model}` ({alias.evidence.kind})",)
            lookups.append((catalog, alias.model, f"alias of `{alias.model}`"))
        matched = alias.model if alias is not None else stripped
        if entry is not None and entry.profile_prefixes:
            lookups += profile_lookups(catalog, matched, entry.profile_prefixes)
        lookups += self._vendor_lookups(name, entry, matched)
        return build(
            ModelRef,
            {
                "provider": name,
                "model": model,
                "matched": matched,
                "lookups": tuple(lookups),
                "catalog": catalog,
                "notes": notes,
                "alias": alias,
            },
        )

    def _vendor_lookups(
        self, name: str, entry: Entry | None, model: str
    ) -> list[tuple[str, str, str]]:
        """Where else a vendor's own model is listed: a vendor-prefixed id (`xai/grok-4`) on
        the vendor is its bare id; on a gateway it is the vendor's own section's id; a bare
        id on a vendor is also how gateways list it (`xai/grok-4`, `x-ai/grok-4`)."""
        prefix, slash, rest = model.partition("/")
        if slash and rest:
            owner = self._owner(prefix)
            if owner is None:
                return []
            if owner.id == name:
                return [(owner.catalog, rest, f"without the vendor prefix `{prefix}/`")]
            own = (owner.catalog, rest, f"in the section of its vendor `{owner.id}`")
            return [own, *as_gateways_list(owner, rest, prefix)]
        return as_gateways_list(entry, model) if entry is not None else []

    def _owner(self, prefix: str) -> Entry | None:
        """The entry a model id's vendor prefix names (`xai` in `xai/grok-4`), if any."""
        if prefix in self._owners:
            return self._owners[prefix]
        owner = self.entries.get(self.canonical(prefix))
        if len(self._owners) < 1024:  # bounded: prefixes come from callers
            self._owners[prefix] = owner
        return owner

    def route(
        self,
        provider: str,
        model: str,
        overrides: ProviderOverride | None = None,
        *,
        vision: str = "unknown",
        declared_vision: str | None = None,
        base_url: str | None = None,
    ) -> ProviderRoute:
        """The route for a provider and model; `overrides` is the agent config's declaration,
        `vision` the model's `catalog` fact, `declared_vision` the provenance of a config's
        `supports_vision: true` for this model (None when not declared)."""
        ref = self.locate(provider, model, base_url)
        return self.route_ref(ref, overrides, vision=vision, declared_vision=declared_vision)

    def route_ref(
        self,
        ref: ModelRef,
        overrides: ProviderOverride | None = None,
        *,
        vision: str = "unknown",
        declared_vision: str | None = None,
    ) -> ProviderRoute:
        """The route for a located model (see `route`)."""
        entry = self.entries.get(ref.provider)
        declared = overrides if overrides and overrides.tool_result_images is not None else None
        here = self._for_provider(ref.provider)
        screen = here.screen
        # Most models meet no pattern at all: then no rule, veto or message rule is looked at.
        patterned = screen is not None and (
            screen.matches(ref.matched) or (ref.model != ref.matched and screen.matches(ref.model))
        )
        if declared is not None:
            answer = self._declared(ref, entry, declared, vision, patterned)
        elif entry is not None:
            answer = self._listed(ref, entry, vision, patterned)
        elif declared_vision is None:
            answer = here.answer  # an unknown provider refuses, whatever the model
        else:
            answer = unknown_answer(
                ref.provider, ref.model, declared_vision, self.default_api, self.label
            )
        known = entry is not None or declared is not None
        if not patterned:
            if answer is here.answer:  # the provider's own answer: shared but for the model
                return self._shared_route(ref, entry, answer, known, None)
            return self._build(ref, entry, answer, known)
        veto = first_match(here.vetoes, ref) if answer.accepts else None
        if veto is not None:
            reason = f"`{ref.model}` is vetoed: {veto.note}"
            answer = Answer(answer.api, False, reason, self.label, veto.evidence)
        rule = first_match(here.rules, ref)
        if rule is not None and answer.accepts and rule_blocks(rule, answer.api):
            reason = f"`{ref.model}` takes no user message after a tool message: {rule.note}"
            answer = Answer(answer.api, False, reason, self.label, rule.evidence)
        if answer is here.answer:  # only a message rule applies: its order is shared too
            return self._shared_route(ref, entry, answer, known, rule)
        return self._build(ref, entry, answer, known, rule)

    def message_rule(self, ref: ModelRef) -> MessageRule | None:
        """The first message-order rule for a located provider and model, if any."""
        return first_match(self._for_provider(ref.provider).rules, ref)

    def _endpoint(self, name: str, base_url: str | None) -> str:
        entry = self.entries.get(name)
        if entry is None or not base_url:
            return name
        cleaned = base_url.strip().rstrip("/").lower()
        for suffix, target in entry.base_url_routes:
            if cleaned.endswith(suffix.rstrip("/").lower()):
                return target
        return name

    def _for_provider(self, provider: str) -> Applicable:
        """What can apply to `provider` (see `Applicable`; bounded: ids come from callers)."""
        found = self._applicable.get(provider)
        if found is None:
            entry = self.entries.get(provider)
            vetoes = tuple(veto for veto in self.vetoes if veto.provider.matches(provider))
            rules = tuple(rule for rule in self.message_rules if rule.provider.matches(provider))
            patterns = [
                *(
                    pattern
                    for rule in (entry.rules if entry else ())
                    for pattern in rule.match.text
                ),
                *(pattern for veto in vetoes for pattern in veto.model.text),
                *(pattern for rule in rules for pattern in rule.model.text),
            ]
            answer = (
                own_answer(entry, self.label)
                if entry is not None
                else unknown_answer(provider, "", None, self.default_api, self.label)
            )
            found = Applicable(vetoes, rules, Patterns.of(patterns) if patterns else None, answer)
            if len(self._applicable) < 1024:
                self._applicable[provider] = found
        return found

    def _listed(self, ref: ModelRef, entry: Entry, vision: str, patterned: bool = True) -> Answer:
        answer = entry_answer(entry, ref.matched, vision, self.label) if patterned else None
        answer = answer or self._for_provider(entry.id).answer
        alias = ref.alias
        if alias is None or not answer.accepts:
            return answer
        kind = weaker(answer.evidence.kind, alias.evidence.kind)
        evidence = answer.evidence if kind == answer.evidence.kind else alias.evidence
        reason = f"`{alias.alias}` points at `{alias.model}` ({alias.note}); {answer.reason}"
        return Answer(answer.api, True, reason, self.label, evidence)

    def _declared(
        self,
        ref: ModelRef,
        entry: Entry | None,
        declared: ProviderOverride,
        vision: str,
        patterned: bool = True,
    ) -> Answer:
        accepts = bool(declared.tool_result_images)
        listed = self._listed(ref, entry, vision, patterned) if entry is not None else None
        api = declared.api or (listed.api if listed is not None else self.default_api)
        reason = f"tool_result_images: {str(accepts).lower()} (api {api})"
        if listed is not None and listed.accepts != accepts:
            reason += f", over {self.label}: {listed.reason}"
        return Answer(api, accepts, reason, declared.origin, Evidence("declared", "", ""))

    def _build(
        self,
        ref: ModelRef,
        entry: Entry | None,
        answer: Answer,
        known: bool,
        rule: MessageRule | None = None,
    ) -> ProviderRoute:
        return route_of(ref, answer, self._limits_for(entry, answer.api), known, rule)

    def _shared_route(
        self,
        ref: ModelRef,
        entry: Entry | None,
        answer: Answer,
        known: bool,
        rule: MessageRule | None,
    ) -> ProviderRoute:
        """`_build` for the provider's own answer (and a message rule, if one applies):
        every field but the model is the same for all such models of the provider, so they
        are copied from the first such route."""
        # A rule by identity: it is one of this registry's own, alive as long as this cache.
        key = (ref.provider, known, id(rule) if rule is not None else 0)
        values = self._shared_routes.get(key)
        if values is None:
            values = dict(self._build(ref, entry, answer, known, rule).__dict__)
            if len(self._shared_routes) < 1024:  # bounded: provider ids come from callers
                self._shared_routes[key] = values
        route = values.copy()
        route["model"] = ref.model
        return build(ProviderRoute, route)

    def _limits_for(self, entry: Entry | None, api: str) -> Limits:
        """The limits of a shape as a provider sets them (kept per provider and shape)."""
        key = (entry.id if entry is not None else "", api)
        found = self._limits.get(key)
        if found is None:
            base = self.apis[api]
            own = entry.limits if entry is not None and entry.limits else None
            found = base if own is None else limits_with(base, own)
            if len(self._limits) < 1024:
                self._limits[key] = found
        return found


def analyze_registry_text(
    text: str, file: str = "<registry>"
) -> tuple[ProviderRegistry | None, list[Diagnostic]]:
    """Run every stage of the loader that can run; never raises for bad input (the linter's
    entry point)."""
    # Imported on first use, so that commands that never read the registry do not load its
    # validator (test_cli_imports).
    from ._load import read_registry_text

    tables, diagnostics = read_registry_text(text, file)
    return (None if tables is None else ProviderRegistry.of(tables)), diagnostics


def __getattr__(name: str) -> object:  # `resources` when asked for: 2 ms of a `decide`
    if name == "resources":
        from importlib import resources

        return resources
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=1)
def _bundled_registry() -> ProviderRegistry:
    from .._tables import cached_bundled_table

    def load(text: str) -> ProviderRegistry:
        return ProviderRegistry.from_text(text, BUNDLED_FILE)

    return cached_bundled_table("registry", BUNDLED_FILE, load, ProviderRegistry)
