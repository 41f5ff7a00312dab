"""The provider registry: does an image inside a tool result reach this provider and model?

The registry is data (`policies/providers.yaml`), validated like a policy: YAML with
locations, a cerberus schema, then semantic checks, every problem a located diagnostic. A
route is resolved in this order, first answer wins (the file's header says the same):

1. a matching veto refuses a route that would otherwise accept, even one the agent config
   declares (the route's reason then names the veto);
2. the agent config's declaration for the provider (`ProviderOverride`), when given;
3. the provider's model rules, in order; 4. the provider's own answer;
5. an unknown provider refuses: errors and gaps never open the native lane.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from .._diagnostics import Diagnostic, PolicyError, has_errors
from .._validate import validate
from .._yaml import LoadedYaml, load_yaml, read_source_file
from ._registry_schema import (
    API_NAMES,
    MEDIA_TYPES,
    REGISTRY_SCHEMA,
    place_registry_diagnostic,
    refine_registry_diagnostic,
)

__all__ = ["API_NAMES", "MEDIA_TYPES", "ProviderOverride", "ProviderRegistry", "ProviderRoute"]

BUNDLED_FILE: Final = "providers.yaml"


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
class Limits:
    """What one payload carries at most, and in which formats."""

    formats: tuple[str, ...]
    max_image_base64: int
    max_edge_px: int
    max_images_per_request: int


@dataclass(frozen=True)
class ProviderRoute:
    """How images reach a provider and model: the `path` fact plus the payload facts."""

    provider: str
    """The registry id (aliases resolved), or the provider as given when it is unknown."""
    model: str
    api: str
    accepts_tool_images: bool
    reason: str
    formats: tuple[str, ...]
    """Media types, in preference order (the first is the re-encode target)."""
    max_image_base64: int
    max_edge_px: int
    max_images_per_request: int
    known: bool
    """The registry lists the provider or the agent config declares it."""
    source: str = BUNDLED_FILE
    """Who decided: the registry file, or the agent config declaration."""
    catalog: str = ""
    """The model catalog section to look the model up in (models.dev provider id)."""

    @property
    def path(self) -> str:
        """The `path` fact."""
        return "accepts" if self.accepts_tool_images else "refuses"


@dataclass(frozen=True)
class _Patterns:
    """Shell-style globs, matched case-insensitively on an id and on its last `/` segment."""

    text: tuple[str, ...]
    regex: re.Pattern[str]
    anything: bool
    """One of the patterns is `*`."""

    @classmethod
    def of(cls, patterns: list[str]) -> _Patterns:
        joined = "|".join(fnmatch.translate(pattern.lower()) for pattern in patterns)
        return cls(tuple(patterns), re.compile(joined), "*" in patterns)

    def matches(self, name: str) -> bool:
        if self.anything:
            return True
        folded = name.lower()
        return bool(self.regex.match(folded) or self.regex.match(folded.rpartition("/")[2]))


@dataclass(frozen=True)
class _Answer:
    """The decision part of a route, before the limits are attached."""

    api: str
    accepts: bool
    reason: str
    source: str


@dataclass(frozen=True)
class _ModelRule:
    match: _Patterns
    tool_result_images: bool
    api: str | None
    note: str


@dataclass(frozen=True)
class _Entry:
    id: str
    api: str
    tool_result_images: bool
    catalog: str
    note: str
    rules: tuple[_ModelRule, ...]
    limits: Mapping[str, Any]
    """Limits this provider sets itself, over those of its api."""


@dataclass(frozen=True)
class _Veto:
    provider: _Patterns
    model: _Patterns
    note: str


@dataclass(frozen=True, eq=False)
class ProviderRegistry:
    """A validated registry. Immutable; `route` is a pure function of it and its inputs."""

    file: str
    label: str
    """The file name provenance lines cite, e.g. `providers.yaml`."""
    default_api: str
    apis: Mapping[str, Limits]
    entries: Mapping[str, _Entry]
    names: Mapping[str, str]
    """Every id and alias -> the registry id."""
    vetoes: tuple[_Veto, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    @classmethod
    def bundled(cls) -> ProviderRegistry:
        """The registry shipped in `policies/providers.yaml` (loaded once)."""
        return _bundled_registry()

    @classmethod
    def from_file(cls, path: str | Path) -> ProviderRegistry:
        return cls.from_text(read_source_file(path), str(path))

    @classmethod
    def from_text(cls, text: str, file: str = "<registry>") -> ProviderRegistry:
        """Load and validate a registry; raise `PolicyError` carrying every diagnostic."""
        registry, diagnostics = analyze_registry_text(text, file)
        if registry is None or has_errors(diagnostics):
            raise PolicyError(diagnostics)
        return registry

    def canonical(self, provider: str) -> str:
        """The registry id for a provider id or alias (normalized), else the normalized input."""
        name = provider.strip().lower()
        return self.names.get(name, name)

    def route(
        self, provider: str, model: str, overrides: ProviderOverride | None = None
    ) -> ProviderRoute:
        """The route for a provider and model; `overrides` is the agent config's declaration."""
        name = self.canonical(provider)
        model = model.strip()
        entry = self.entries.get(name)
        declared = overrides if overrides and overrides.tool_result_images is not None else None
        if declared is not None:
            answer = self._declared(name, model, entry, declared)
        elif entry is not None:
            answer = self._listed(name, model, entry)
        else:
            answer = self._unknown(name)
        veto = self._veto(name, model) if answer.accepts else None
        if veto is not None:
            answer = _Answer(answer.api, False, f"`{model}` is vetoed: {veto.note}", self.label)
        return self._build(name, model, entry, answer, entry is not None or declared is not None)

    def _veto(self, name: str, model: str) -> _Veto | None:
        for veto in self.vetoes:
            if veto.provider.matches(name) and veto.model.matches(model):
                return veto
        return None

    def _listed(self, name: str, model: str, entry: _Entry) -> _Answer:
        for rule in entry.rules:
            if rule.match.matches(model):
                verb = "accepts" if rule.tool_result_images else "refuses"
                reason = f"{name} {verb} `{model}`: {rule.note}"
                return _Answer(rule.api or entry.api, rule.tool_result_images, reason, self.label)
        verb = "accepts" if entry.tool_result_images else "refuses"
        reason = f"{name} {verb}: {entry.note}"
        return _Answer(entry.api, entry.tool_result_images, reason, self.label)

    def _declared(
        self, name: str, model: str, entry: _Entry | None, declared: ProviderOverride
    ) -> _Answer:
        accepts = bool(declared.tool_result_images)
        listed = self._listed(name, model, entry) if entry is not None else None
        api = declared.api or (listed.api if listed is not None else self.default_api)
        reason = f"tool_result_images: {str(accepts).lower()} (api {api})"
        if listed is not None and listed.accepts != accepts:
            reason += f", over {self.label}: {listed.reason}"
        return _Answer(api, accepts, reason, declared.origin)

    def _unknown(self, name: str) -> _Answer:
        reason = (
            f"`{name}` is not in {self.label} nor declared in the agent config, so it "
            f"refuses (declare `providers.{name}.tool_result_images` to change that)"
        )
        return _Answer(self.default_api, False, reason, self.label)

    def _build(
        self, name: str, model: str, entry: _Entry | None, answer: _Answer, known: bool
    ) -> ProviderRoute:
        base = self.apis[answer.api]
        own = entry.limits if entry is not None else {}
        return ProviderRoute(
            provider=name,
            model=model,
            api=answer.api,
            accepts_tool_images=answer.accepts,
            reason=answer.reason,
            formats=tuple(own.get("formats", base.formats)),
            max_image_base64=own.get("max_image_base64", base.max_image_base64),
            max_edge_px=own.get("max_edge_px", base.max_edge_px),
            max_images_per_request=own.get("max_images_per_request", base.max_images_per_request),
            known=known,
            source=answer.source,
            catalog=entry.catalog if entry is not None else name,
        )


# -- loading: named stages that collect diagnostics, as for policies ----------------------------


@dataclass
class _Context:
    text: str
    file: str
    loaded: LoadedYaml | None = None
    document: dict[str, Any] | None = None
    registry: ProviderRegistry | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _stage_yaml(context: _Context) -> None:
    context.loaded = load_yaml(context.text, context.file)
    context.diagnostics.extend(context.loaded.diagnostics)


def _stage_schema(context: _Context) -> None:
    assert context.loaded is not None
    loaded = context.loaded
    document, found = validate(loaded, REGISTRY_SCHEMA, refine_registry_diagnostic)
    context.document = document
    context.diagnostics.extend(place_registry_diagnostic(d, loaded) for d in found)


def _stage_names(context: _Context) -> None:
    assert context.loaded is not None and context.document is not None
    context.diagnostics.extend(_name_clashes(context.document, context.loaded))


def _stage_build(context: _Context) -> None:
    assert context.document is not None
    context.registry = _build_registry(context.document, context.file)


STAGES: tuple[tuple[str, Callable[[_Context], None]], ...] = (
    ("load_yaml", _stage_yaml),
    ("schema", _stage_schema),
    ("names", _stage_names),
    ("build", _stage_build),
)


def analyze_registry_text(
    text: str, file: str = "<registry>"
) -> tuple[ProviderRegistry | None, list[Diagnostic]]:
    """Run every stage that can run; never raises for bad input (the linter's entry point)."""
    context = _Context(text, file)
    for _name, stage in STAGES:
        stage(context)
        if has_errors(context.diagnostics):
            break
    return context.registry, context.diagnostics


def _name_clashes(document: Mapping[str, Any], loaded: LoadedYaml) -> list[Diagnostic]:
    """Every provider id and alias must name exactly one provider."""
    owners: dict[str, str] = {name: name for name in document["providers"]}
    found: list[Diagnostic] = []
    for name, entry in document["providers"].items():
        for index, alias in enumerate(entry.get("aliases", [])):
            owner = owners.setdefault(alias, name)
            if owner != name or alias == name:
                path = ("providers", name, "aliases", index)
                found.append(
                    Diagnostic(
                        "duplicate-provider-name",
                        "error",
                        f"alias `{alias}` of `{name}` already names provider `{owner}`",
                        loaded.location(path),
                        path,
                        help="every provider id and alias must name one provider",
                    )
                )
    return found


def _build_registry(document: Mapping[str, Any], file: str) -> ProviderRegistry:
    apis = {
        name: Limits(
            tuple(spec["formats"]),
            spec["max_image_base64"],
            spec["max_edge_px"],
            spec["max_images_per_request"],
        )
        for name, spec in document["apis"].items()
    }
    entries = {name: _build_entry(name, spec) for name, spec in document["providers"].items()}
    names = {name: name for name in entries}
    for name, spec in document["providers"].items():
        names.update(dict.fromkeys(spec.get("aliases", []), name))
    vetoes = tuple(
        _Veto(_Patterns.of(spec["provider"]), _Patterns.of(spec["model"]), spec["note"].strip())
        for spec in document["vetoes"]
    )
    return ProviderRegistry(
        file=file,
        label=Path(file).name,
        default_api=document["defaults"].get("api", "openai-chat"),
        apis=MappingProxyType(apis),
        entries=MappingProxyType(entries),
        names=MappingProxyType(names),
        vetoes=vetoes,
    )


def _build_entry(name: str, spec: Mapping[str, Any]) -> _Entry:
    rules = tuple(
        _ModelRule(
            _Patterns.of(rule["match"]),
            rule["tool_result_images"],
            rule.get("api"),
            rule["note"].strip(),
        )
        for rule in spec.get("models", [])
    )
    limit_keys = ("formats", "max_image_base64", "max_edge_px", "max_images_per_request")
    return _Entry(
        id=name,
        api=spec["api"],
        tool_result_images=spec["tool_result_images"],
        catalog=spec.get("catalog", name),
        note=spec["note"].strip(),
        rules=rules,
        limits=MappingProxyType({key: spec[key] for key in limit_keys if key in spec}),
    )


@functools.lru_cache(maxsize=1)
def _bundled_registry() -> ProviderRegistry:
    text = (resources.files("visiongate.policies") / BUNDLED_FILE).read_text("utf-8")
    return ProviderRegistry.from_text(text, BUNDLED_FILE)
