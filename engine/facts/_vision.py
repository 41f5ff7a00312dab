"""The `catalog` fact: does this model read images? First answer wins:

1. the main model's `model.supports_vision` (when it applies to the model);
2. the provider's declaration: `providers.<p>.models.<m>.supports_vision`, or the
   `custom_providers` entry's `models` (alias `vision`);
3. `model_overrides.<m>` (or `model_overrides.<p>/<m>`) `.supports_vision`;
4. the local runtime, asked (`_runtimes`: Ollama's `/api/show`, llama.cpp's `/props`), when
   the provider is one and it answers;
5. the model catalog, over the located ids in order (routing variants stripped, floating
   aliases followed, input-preserving variants such as OpenRouter's `:free` resolved to the
   base model when the catalog has no entry of their own);
6. `unknown`, with a did-you-mean warning when a near id exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._catalog import CatalogAnswer, ModelCatalog
from ._config import AgentConfig, ProviderDeclaration, Sourced
from ._registry import ModelRef, ProviderRegistry
from ._runtimes import RuntimeAnswer, RuntimeProbe, default_base_url

__all__ = ["Inputs", "VisionFact", "resolve_vision"]


@dataclass(frozen=True)
class VisionFact:
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
) -> VisionFact:
    config = inputs.config
    declared = _declared(config, declaration, provider, model)
    if declared is not None and declared.value is not None:
        return VisionFact(_vision(declared.value), declared.provenance, declared=declared)
    warnings = declared.warnings if declared is not None else ()
    runtime = _ask_runtime(inputs, provider, ref)
    expires = inputs.runtimes.expires(runtime) if runtime is not None else None
    if runtime is not None and runtime.verdict != "unknown":
        return VisionFact(runtime.verdict, runtime.provenance, None, warnings, None, expires)
    answer, note = _lookup(inputs.catalog, ref)
    line = _catalog_line(inputs.catalog, answer, ref, note)
    if runtime is not None:
        line = f"{runtime.provenance}; {line}"
    if answer.verdict == "unknown":
        warnings += _suggestion(inputs.catalog, ref)
    return VisionFact(answer.verdict, line, answer, warnings, None, expires)


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
    if entry is None or entry.runtime is None:
        return None
    base_url = inputs.config.base_url_for(provider) or default_base_url(entry.runtime)
    return inputs.runtimes.ask(entry.runtime, base_url, ref.model)


def _lookup(catalog: ModelCatalog, ref: ModelRef) -> tuple[CatalogAnswer, str]:
    """The first catalog answer that knows the model, over the located ids in order."""
    answer, note = CatalogAnswer("unknown"), ""
    for section, candidate, how in ref.lookups:
        answer, note = catalog.lookup(section, candidate), how
        if answer.verdict != "unknown":
            break
    return answer, "" if note == "exact id" else note


def _catalog_line(catalog: ModelCatalog, answer: CatalogAnswer, ref: ModelRef, note: str) -> str:
    label = catalog.label
    if answer.verdict == "unknown":
        notes = "; ".join(ref.notes)
        extra = f"; {notes}" if notes else ""
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
