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
from importlib import resources
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from visiongate.kernel.shapes import API_NAMES, shape_named

from ..._diagnostics import Diagnostic, PolicyError, has_errors
from ..._yaml import read_source_file
from .._keys import model_id, provider_key
from ._types import (
    EVIDENCE,
    MEDIA_TYPES,
    Entry,
    Evidence,
    Limits,
    MessageRule,
    ModelAlias,
    Patterns,
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
]

BUNDLED_FILE: Final = "providers.yaml"

TRUSTED_EVIDENCE: Final = ("documented", "declared", "probed")
"""Evidence on which `accepts` is the `path` fact `accepts`: a provider document, the
operator's declaration, or a probe that read an image back through the route."""


def path_of(accepts: bool, evidence: str) -> str:
    """The `path` fact for a verdict and its evidence."""
    if not accepts:
        return "refuses"
    return "accepts" if evidence in TRUSTED_EVIDENCE else "unverified"


def weaker(first: str, second: str) -> str:
    """The weaker of two registry evidences (`documented` > `field` > `assumed`)."""
    rank = {name: index for index, name in enumerate(EVIDENCE)}
    return max(first, second, key=lambda evidence: rank.get(evidence, len(EVIDENCE)))


@dataclass(frozen=True)
class ProviderOverride:
    """What an agent config declares about one provider (`providers.<id>` in the config)."""

    tool_result_images: bool | None = None
    api: str | None = None
    origin: str = "agent config"
    """Where the declaration was read, for provenance (e.g. `config.yaml: providers.myproxy`)."""

    def __post_init__(self) -> None:
        if self.api is not None and self.api not in API_NAMES:
            raise ValueError(f"unknown api `{self.api}`: expected one of {', '.join(API_NAMES)}")


@dataclass(frozen=True)
class ProviderRoute:
    """How images reach a provider and model: the `path` fact plus the payload facts."""

    provider: str
    """The registry id (aliases resolved), or the provider as given when it is unknown."""
    model: str
    api: str
    accepts_tool_images: bool
    """The verdict: images may be sent (see `path` for how much that is trusted)."""
    reason: str
    formats: tuple[str, ...]
    """Media types, in preference order (the first is the re-encode target)."""
    max_image_base64: int
    max_edge_px: int
    max_images_per_request: int
    known: bool
    """The registry lists the provider or the agent config declares it."""
    source: str = BUNDLED_FILE
    """Who decided: the registry file, the agent config declaration, or the routes overlay."""
    catalog: str = ""
    """The model catalog section to look the model up in (models.dev provider id)."""
    evidence: str = "documented"
    """`documented`, `field`, `assumed` (registry), `declared` (agent config), `learned` or
    `probed` (routes overlay)."""
    cites: str = ""
    """Where the evidence can be read, when the registry names it."""
    where: str = ""
    """`file:line` of the registry entry that decided, when one did."""
    user_after_tool: str = "allowed"
    """The provider's message-order rule for a user message right after a tool message:
    `allowed`, `bridge` (rendering inserts an assistant turn) or `refuses`
    (`visiongate.kernel.shapes` explains them)."""
    message_rule: str = ""
    """The rule's note, evidence and `file:line`, when a registry rule applies."""

    @property
    def path(self) -> str:
        """The `path` fact: `accepts`, `refuses` or `unverified`."""
        return path_of(self.accepts_tool_images, self.evidence)

    @property
    def limits(self) -> Limits:
        return Limits(
            self.formats, self.max_image_base64, self.max_edge_px, self.max_images_per_request
        )


@dataclass(frozen=True)
class ModelRef:
    """A provider and model located in the registry: what rules and the catalog look at."""

    provider: str
    """The registry id (aliases and base URL routes resolved), else the provider as given."""
    model: str
    """The model as given, stripped."""
    matched: str
    """What model rules and vetoes see: routing variants stripped, a floating alias replaced."""
    lookups: tuple[tuple[str, str, str], ...]
    """(catalog section, model id, how it was derived): the look-ups to try, in order."""
    catalog: str
    """The catalog section to look in."""
    notes: tuple[str, ...] = ()
    """How the model was rewritten (`routing variant `:nitro` stripped`), for provenance."""
    alias: ModelAlias | None = None


class _Answer(NamedTuple):
    """The decision part of a route, before the limits are attached (a named tuple: built for
    every never-seen model, and a tuple is built in C)."""

    api: str
    accepts: bool
    reason: str
    source: str
    evidence: Evidence


class _Applicable(NamedTuple):
    """What of the registry can apply to one provider id, kept per id: the patterns do not
    change, and a never-seen model on the provider needs all of it."""

    vetoes: tuple[Veto, ...]
    rules: tuple[MessageRule, ...]
    screen: Patterns | None
    """Every model pattern of the entry's rules, the vetoes and the message rules above; a
    model it does not match meets none of them (None: there are none)."""
    answer: _Answer
    """The entry's own answer, when no model rule matches; for a provider the registry does
    not list, its refusal (the config declares no model of it to read images)."""


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
    _applicable: dict[str, _Applicable] = field(default_factory=dict, repr=False)
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
    def from_text(cls, text: str, file: str = "<registry>") -> ProviderRegistry:
        """Load and validate a registry; raise `PolicyError` carrying every diagnostic."""
        from ._load import analyze_registry_text

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
                stripped, notes = _strip_variants(model, entry.strip_variants)
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
            lookups += _profile_lookups(catalog, matched, entry.profile_prefixes)
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
            return [own, *_as_gateways_list(owner, rest, prefix)]
        return _as_gateways_list(entry, model) if entry is not None else []

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
            answer = self._unknown(ref.provider, ref.model, declared_vision)
        known = entry is not None or declared is not None
        if not patterned:
            if answer is here.answer:  # the provider's own answer: shared but for the model
                return self._shared_route(ref, entry, answer, known, None)
            return self._build(ref, entry, answer, known)
        veto = _first(here.vetoes, ref) if answer.accepts else None
        if veto is not None:
            reason = f"`{ref.model}` is vetoed: {veto.note}"
            answer = _Answer(answer.api, False, reason, self.label, veto.evidence)
        rule = _first(here.rules, ref)
        if rule is not None and answer.accepts and _rule_blocks(rule, answer.api):
            reason = f"`{ref.model}` takes no user message after a tool message: {rule.note}"
            answer = _Answer(answer.api, False, reason, self.label, rule.evidence)
        if answer is here.answer:  # only a message rule applies: its order is shared too
            return self._shared_route(ref, entry, answer, known, rule)
        return self._build(ref, entry, answer, known, rule)

    def message_rule(self, ref: ModelRef) -> MessageRule | None:
        """The first message-order rule for a located provider and model, if any."""
        return _first(self._for_provider(ref.provider).rules, ref)

    def _endpoint(self, name: str, base_url: str | None) -> str:
        entry = self.entries.get(name)
        if entry is None or not base_url:
            return name
        cleaned = base_url.strip().rstrip("/").lower()
        for suffix, target in entry.base_url_routes:
            if cleaned.endswith(suffix.rstrip("/").lower()):
                return target
        return name

    def _for_provider(self, provider: str) -> _Applicable:
        """What can apply to `provider` (see `_Applicable`; bounded: ids come from callers)."""
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
                _own_answer(entry, self.label)
                if entry is not None
                else self._unknown(provider, "", None)
            )
            found = _Applicable(vetoes, rules, Patterns.of(patterns) if patterns else None, answer)
            if len(self._applicable) < 1024:
                self._applicable[provider] = found
        return found

    def _listed(self, ref: ModelRef, entry: Entry, vision: str, patterned: bool = True) -> _Answer:
        answer = _entry_answer(entry, ref.matched, vision, self.label) if patterned else None
        answer = answer or self._for_provider(entry.id).answer
        alias = ref.alias
        if alias is None or not answer.accepts:
            return answer
        kind = weaker(answer.evidence.kind, alias.evidence.kind)
        evidence = answer.evidence if kind == answer.evidence.kind else alias.evidence
        reason = f"`{alias.alias}` points at `{alias.model}` ({alias.note}); {answer.reason}"
        return _Answer(answer.api, True, reason, self.label, evidence)

    def _declared(
        self,
        ref: ModelRef,
        entry: Entry | None,
        declared: ProviderOverride,
        vision: str,
        patterned: bool = True,
    ) -> _Answer:
        accepts = bool(declared.tool_result_images)
        listed = self._listed(ref, entry, vision, patterned) if entry is not None else None
        api = declared.api or (listed.api if listed is not None else self.default_api)
        reason = f"tool_result_images: {str(accepts).lower()} (api {api})"
        if listed is not None and listed.accepts != accepts:
            reason += f", over {self.label}: {listed.reason}"
        return _Answer(api, accepts, reason, declared.origin, Evidence("declared", "", ""))

    def _unknown(self, name: str, model: str, declared_vision: str | None) -> _Answer:
        if declared_vision is not None:
            reason = (
                f"`{name}` is not in {self.label}, but {declared_vision} declares that "
                f"`{model}` reads images; like the production agent, a custom or local "
                "endpoint serving such a model is opened, unverified"
            )
            evidence = Evidence("field", "production agent rule (research §1.6b)", "")
            return _Answer(self.default_api, True, reason, "agent config", evidence)
        reason = (
            f"`{name}` is not in {self.label} nor declared in the agent config, so it "
            f"refuses (declare `providers.{name}.tool_result_images` to change that)"
        )
        return _Answer(self.default_api, False, reason, self.label, Evidence("assumed", "", ""))

    def _build(
        self,
        ref: ModelRef,
        entry: Entry | None,
        answer: _Answer,
        known: bool,
        rule: MessageRule | None = None,
    ) -> ProviderRoute:
        limits = self._limits_for(entry, answer.api)
        if rule is None:
            user_after_tool, message_rule = "allowed", ""
        else:
            user_after_tool = rule.user_after_tool
            message_rule = f"{rule.note} ({rule.evidence.kind}, {rule.evidence.where})"
        return build(
            ProviderRoute,
            {
                "provider": ref.provider,
                "model": ref.model,
                "api": answer.api,
                "accepts_tool_images": answer.accepts,
                "reason": answer.reason,
                "formats": limits.formats,
                "max_image_base64": limits.max_image_base64,
                "max_edge_px": limits.max_edge_px,
                "max_images_per_request": limits.max_images_per_request,
                "known": known,
                "source": answer.source,
                "catalog": ref.catalog,
                "evidence": answer.evidence.kind,
                "cites": answer.evidence.cites,
                "where": answer.evidence.where,
                "user_after_tool": user_after_tool,
                "message_rule": message_rule,
            },
        )

    def _shared_route(
        self,
        ref: ModelRef,
        entry: Entry | None,
        answer: _Answer,
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


_Matched = TypeVar("_Matched", Veto, MessageRule)


def _first(items: tuple[_Matched, ...], ref: ModelRef) -> _Matched | None:
    """The first veto or rule whose model patterns match the model (plain loops: this runs
    for every never-seen model)."""
    if not items:
        return None
    names = (ref.matched,) if ref.matched == ref.model else (ref.matched, ref.model)
    for item in items:
        for name in names:
            if item.model.matches(name):
                return item
    return None


def _as_gateways_list(entry: Entry, model: str, given: str = "") -> list[tuple[str, str, str]]:
    how, catalog = entry.as_gateways_list, entry.catalog
    return [(catalog, f"{name}/{model}", how) for name in entry.vendor_names if name != given]


def _rule_blocks(rule: MessageRule, api: str) -> bool:
    """A rule that leaves no valid order for a shape whose images follow in a user message."""
    return rule.user_after_tool == "refuses" and shape_named(api).user_follows_tool


def _entry_answer(entry: Entry, model: str, vision: str, label: str) -> _Answer | None:
    """The verdict of the provider's first model rule that matches, if any."""
    for rule in entry.rules:
        if rule.match.matches(model) and (rule.when_catalog is None or vision in rule.when_catalog):
            verb = "accepts" if rule.tool_result_images else "refuses"
            reason = f"{entry.id} {verb} `{model}` ({rule.evidence.kind}): {rule.note}"
            api = rule.api or entry.api
            return _Answer(api, rule.tool_result_images, reason, label, rule.evidence)
    return None


def _own_answer(entry: Entry, label: str) -> _Answer:
    """The provider's verdict for a model no rule of it matches."""
    verb = "accepts" if entry.tool_result_images else "refuses"
    reason = f"{entry.id} {verb} ({entry.evidence.kind}): {entry.note}"
    return _Answer(entry.api, entry.tool_result_images, reason, label, entry.evidence)


def _strip_variants(model: str, variants: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """`model` without a routing-variant suffix (`:nitro`), and a note saying so."""
    base, colon, suffix = model.rpartition(":")
    if colon and base and suffix.lower() in variants:
        return base, (f"routing variant `:{suffix}` stripped",)
    return model, ()


def _profile_lookups(
    catalog: str, model: str, prefixes: tuple[str, ...]
) -> list[tuple[str, str, str]]:
    """The base model of a cross-region inference profile id (`us.amazon.nova-pro-v1:0` is
    `amazon.nova-pro-v1:0`), looked up after the profile id itself."""
    prefix = next((p for p in prefixes if model.lower().startswith(p)), None)
    if prefix is None or len(model) == len(prefix):
        return []
    base = model[len(prefix) :]
    return [(catalog, base, f"inference profile `{model[: len(prefix)]}` of `{base}`")]


@functools.lru_cache(maxsize=1)
def _bundled_registry() -> ProviderRegistry:
    from .._tables import cached_table

    text = (resources.files("visiongate.policies") / BUNDLED_FILE).read_text("utf-8")
    load = functools.partial(ProviderRegistry.from_text, text, BUNDLED_FILE)
    return cached_table("registry", text, load, ProviderRegistry)
