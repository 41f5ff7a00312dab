"""The values a loaded provider registry is made of: limits, patterns, evidence, entries."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from visiongate.kernel.shapes import API_NAMES, Limits

from ._route import build

MEDIA_TYPES: Final = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image formats an adapter can produce."""

T = TypeVar("T")


def limits_with(base: Limits, own: Mapping[str, Any]) -> Limits:
    """A shape's limits with the ones a registry sets itself (a provider's, or `apis.<shape>`)."""
    return Limits(
        tuple(own.get("formats", base.formats)),
        own.get("max_image_base64", base.max_image_base64),
        own.get("max_edge_px", base.max_edge_px),
        own.get("max_images_per_request", base.max_images_per_request),
    )


__all__ = [
    "Entry",
    "Evidence",
    "Limits",
    "MessageRule",
    "ModelAlias",
    "ModelRef",
    "ModelRule",
    "Patterns",
    "ProviderOverride",
    "Veto",
    "build",
    "limits_with",
]


@dataclass(frozen=True)
class Evidence:
    """What a verdict rests on, where it is cited, and where the registry says it."""

    kind: str
    cites: str
    where: str


@dataclass(frozen=True)
class ModelAlias:
    alias: str
    model: str
    note: str
    evidence: Evidence


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


@dataclass(frozen=True)
class Patterns:
    """Shell-style globs, matched case-insensitively on an id and on its last `/` segment."""

    text: tuple[str, ...]
    regex: re.Pattern[str]
    """Matches an id the globs match."""
    anything: bool
    """One of the patterns is `*`."""
    either: re.Pattern[str] = field(compare=False, repr=False)
    """Matches an id when the globs match it or its last `/` segment: one search instead of
    two on the decide path."""

    @classmethod
    def of(cls, patterns: list[str]) -> Patterns:
        joined = "|".join(fnmatch.translate(pattern.lower()) for pattern in patterns)
        # The second branch skips to the last `/` (the look-ahead sees no other) and matches
        # the segment after it.
        either = re.compile(f"(?:{joined})|(?s:.*/)(?=[^/]*\\Z)(?:{joined})")
        return cls(tuple(patterns), re.compile(joined), "*" in patterns, either)

    def matches(self, name: str) -> bool:
        return self.anything or self.either.match(name.lower()) is not None


@dataclass(frozen=True)
class ModelRule:
    match: Patterns
    tool_result_images: bool
    api: str | None
    note: str
    evidence: Evidence
    when_catalog: frozenset[str] | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    api: str
    tool_result_images: bool
    catalog: str
    note: str
    evidence: Evidence
    rules: tuple[ModelRule, ...]
    limits: Mapping[str, Any]
    """Limits this provider sets itself, over those of its api."""
    aliases: tuple[str, ...] = ()
    strip_variants: tuple[str, ...] = ()
    profile_prefixes: tuple[str, ...] = ()
    """Region prefixes of inference profile ids (Bedrock's `us.`): a profile id the catalog
    does not list is looked up as its base model."""
    model_aliases: tuple[ModelAlias, ...] = ()
    base_url_routes: tuple[tuple[str, str], ...] = ()
    """(suffix, provider id): a base URL ending with `suffix` is that provider's endpoint."""
    runtime: str | None = None
    """A local runtime that can be asked what the model reads (`ollama`, `llamacpp`)."""

    @functools.cached_property
    def vendor_names(self) -> tuple[str, ...]:
        """The id and aliases as gateways prefix this vendor's models (`xai/`, `x-ai/`)."""
        return (self.id, *self.aliases)

    @functools.cached_property
    def as_gateways_list(self) -> str:
        """How a look-up of this vendor's model under a gateway's spelling is noted."""
        return f"as gateways list `{self.id}`'s own model"

    def alias_for(self, model: str) -> ModelAlias | None:
        """The first floating alias that is `model` or its last `/` segment, any case."""
        if not self.model_aliases:
            return None
        index = self._alias_index
        folded = model.lower()
        found = index.get(folded)
        other = index.get(folded.rpartition("/")[2])
        if found is None or (other is not None and other[0] < found[0]):
            found = other
        return found[1] if found is not None else None

    @functools.cached_property
    def _alias_index(self) -> dict[str, tuple[int, ModelAlias]]:
        """Folded alias -> its position and entry (the first of a spelling)."""
        index: dict[str, tuple[int, ModelAlias]] = {}
        for position, alias in enumerate(self.model_aliases):
            index.setdefault(alias.alias.lower(), (position, alias))
        return index


@dataclass(frozen=True)
class Veto:
    provider: Patterns
    model: Patterns
    note: str
    evidence: Evidence


@dataclass(frozen=True)
class MessageRule:
    """A message order a provider (or a model family on any provider) rejects, and the fix."""

    provider: Patterns
    model: Patterns
    user_after_tool: str
    """`bridge` (an assistant turn must come between) or `refuses` (no user message at all)."""
    note: str
    evidence: Evidence

    def matches(self, provider: str, *models: str) -> bool:
        return self.provider.matches(provider) and any(self.model.matches(m) for m in models)


@dataclass(frozen=True)
class RegistryTables:
    """What the loader (`_load`) reads from a valid registry file: a `ProviderRegistry` is
    made of these (kept apart so that the loader needs nothing of the registry's queries)."""

    file: str
    label: str
    default_api: str
    apis: Mapping[str, Limits]
    entries: Mapping[str, Entry]
    names: Mapping[str, str]
    vetoes: tuple[Veto, ...]
    message_rules: tuple[MessageRule, ...]
