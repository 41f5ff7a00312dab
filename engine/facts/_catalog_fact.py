"""The `catalog` fact: does the model read images? The config's declarations first, then a
local runtime's own answer, then the model catalog (with a did-you-mean for a miss and the
operator's contradictions it shows), then the config's fill-gap default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ._catalog import CatalogAnswer, ModelCatalog
from ._runtimes import RuntimeAnswer, RuntimeProbe, default_base_url, is_private_url
from .config._config import AgentConfig, Sourced
from .config._providers import ProviderDeclaration
from .registry._registry import ModelRef, ProviderRegistry


class VisionFact(NamedTuple):
    """The `catalog` fact with where it came from (a named tuple: one per never-seen model,
    dropped once the facts are built)."""

    value: str
    """`vision`, `no_vision` or `unknown`."""
    provenance: str
    answer: CatalogAnswer | None = None
    """What the catalog said, when it was asked."""
    warnings: tuple[str, ...] = ()
    declared: Sourced[bool | None] | None = None
    """The config's declaration, when one answered."""
    expires: float | None = None
    """When a runtime's answer stops being fresh (epoch seconds); None when none was asked."""
    probed: str | None = None
    """A local server's own `vision` answer for a provider the registry does not list: it
    opens that provider's route as a declaration would."""


@dataclass(frozen=True)
class Inputs:
    config: AgentConfig
    catalog: ModelCatalog
    registry: ProviderRegistry
    runtimes: RuntimeProbe


def resolve_vision(
    inputs: Inputs,
    provider: str,
    ref: ModelRef,
    declaration: ProviderDeclaration | None,
    model: str,
    declares: bool = True,
) -> VisionFact:
    """The `catalog` fact; `declares` False says the config declares no model anywhere."""
    config = inputs.config
    declared = _declared(config, declaration, provider, model) if declares else None
    if declared is not None and declared.value is not None:
        return VisionFact(_vision(declared.value), declared.provenance, declared=declared)
    warnings = declared.warnings if declared is not None else ()
    runtime = _ask_runtime(inputs, provider, ref)
    expires = inputs.runtimes.expires(runtime) if runtime is not None else None
    if runtime is not None and runtime.verdict != "unknown":
        probed = runtime.provenance if runtime.runtime == "local" else None
        return VisionFact(
            runtime.verdict, runtime.provenance, None, warnings, None, expires, probed
        )
    answer, note = inputs.catalog.first_known(ref.lookups)
    line = _catalog_line(inputs.catalog, answer, ref, "" if note == "exact id" else note)
    if runtime is not None:
        line = f"{runtime.provenance}; {line}"
    if answer.verdict == "unknown":
        default = config.default_vision(provider) if declares else None
        if default is not None and default.value is not None:
            line = f"{default.provenance} (fills a catalog miss); {line}"
            return VisionFact(
                _vision(default.value), line, answer, warnings, default, expires=expires
            )
        warnings += _suggestion(inputs.catalog, ref)
    warnings += _contradictions(inputs, ref, answer, note)
    return VisionFact(answer.verdict, line, answer, warnings, expires=expires)


def _contradictions(
    inputs: Inputs, ref: ModelRef, answer: CatalogAnswer, note: str
) -> tuple[str, ...]:
    """The operator's own contradictions the catalog shows: `native` on a model it lists as
    text-only (the provider will refuse the pixels), and a model the provider's own section
    does not list while other providers' do (`--provider anthropic --model gpt-5`)."""
    catalog = inputs.catalog
    found: tuple[str, ...] = ()
    if answer.verdict == "no_vision" and inputs.config.mode.value == "native":
        found += (
            f"`agent.image_input_mode` is `native`, but {catalog.label} lists "
            f"`{answer.matched}` as text-only (input=[{', '.join(answer.inputs)}]): its "
            "provider refuses images sent to it",
        )
    elsewhere = (
        answer.verdict != "unknown"
        and note == "exact id"
        and ref.catalog in catalog.providers
        and answer.how.startswith(f"not in `{ref.catalog}`")
    )
    if elsewhere:
        found += (
            f"model `{ref.model}` is not in the `{ref.catalog}` section of {catalog.label}, "
            f"only under other providers (`{answer.matched}`): is `{ref.provider}` the "
            "provider meant?",
        )
    return found


def _declared(
    config: AgentConfig, declaration: ProviderDeclaration | None, provider: str, model: str
) -> Sourced[bool | None] | None:
    """The first config declaration about the model that gives a value (or its warnings)."""
    unusable = None
    for found in (
        config.main_vision_for(model),
        declaration.model_vision(model) if declaration is not None else None,
        config.model_override(provider, model),
    ):
        if found is not None and found.value is not None:
            return found
        unusable = unusable or found
    return unusable


def _ask_runtime(inputs: Inputs, provider: str, ref: ModelRef) -> RuntimeAnswer | None:
    entry = inputs.registry.entries.get(ref.provider)
    if entry is None:
        # A custom endpoint the registry does not list: asked when it is local or private.
        base_url = inputs.config.base_url_for(provider)
        if base_url is None or not is_private_url(base_url):
            return None
        return inputs.runtimes.ask("local", base_url, ref.model)
    if entry.runtime is None:
        return None
    base_url = inputs.config.base_url_for(provider) or default_base_url(entry.runtime)
    return inputs.runtimes.ask(entry.runtime, base_url, ref.model)


def _catalog_line(catalog: ModelCatalog, answer: CatalogAnswer, ref: ModelRef, note: str) -> str:
    label = catalog.label
    if answer.verdict == "unknown":
        extra = f"; {'; '.join(ref.notes)}" if ref.notes else ""
        return f"{label}: `{ref.catalog}/{ref.model}` unknown ({answer.how}{extra})"
    hows = [how for how in (answer.how, note) if how and how != "exact id"]
    how = f" ({'; '.join(hows)})" if hows else ""
    return f"{label}: {answer.matched} input=[{', '.join(answer.inputs)}]{how}"


def _suggestion(catalog: ModelCatalog, ref: ModelRef) -> tuple[str, ...]:
    near = catalog.near(ref.catalog, ref.matched)
    if near is None:
        return ()
    return (f"model `{ref.model}` is not in {catalog.label}: did you mean `{near}`?",)


def _vision(value: bool) -> str:
    return "vision" if value else "no_vision"
