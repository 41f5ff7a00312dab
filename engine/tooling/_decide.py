"""`visiongate decide` as library calls: facts written as text, and a gate for given facts."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from visiongate.kernel._suggest import did_you_mean

from .._vocabulary import FACT_NAMES, FACTS, Cell

if TYPE_CHECKING:
    from .._gate import Gate


def parse_cell(text: str) -> Cell:
    """One cell from `mode=auto catalog=vision aux=unset path=accepts` (spaces or commas, the
    syntax of test files); every fact exactly once, one value each. Raises ValueError."""
    given: dict[str, str] = {}
    for pair in text.replace(",", " ").split():
        name, separator, value = pair.partition("=")
        if not separator or not name:
            raise ValueError(f"`{pair}` is not `fact=value`")
        if name not in FACTS:
            raise ValueError(f"`{name}` is not a fact: {did_you_mean(name, FACT_NAMES)}")
        if name in given:
            raise ValueError(f"fact `{name}` is given twice (`{given[name]}` and `{value}`)")
        if "|" in value:
            raise ValueError(
                f"`{pair}` gives several values; a decision takes one value per fact "
                "(`visiongate explain` shows every cell, a test case can select several)"
            )
        if value not in FACTS[name]:
            raise ValueError(
                f"`{value}` is not a value of fact `{name}`: {did_you_mean(value, FACTS[name])}"
            )
        given[name] = value
    missing = [name for name in FACT_NAMES if name not in given]
    if missing:
        raise ValueError(f"missing fact(s): {', '.join(f'`{name}`' for name in missing)}")
    return (given["mode"], given["catalog"], given["aux"], given["path"])


def facts_gate(
    policy: str | Path | None,
    config: str | Path | None = None,
    catalog: str | Path | None = None,
    registry: str | Path | None = None,
) -> Gate:
    """A gate for facts given directly. `decide_facts` consults neither the model catalog nor
    the provider registry, so unless they are named they are not loaded (loading the bundled
    ones is most of the time `Gate.load` takes). Raises `PolicyError` as `Gate.load` does."""
    from .._gate import Gate
    from ..facts._catalog import ModelCatalog
    from ..facts.registry._registry import ProviderRegistry

    nothing: MappingProxyType[Any, Any] = MappingProxyType({})
    no_catalog = ModelCatalog.empty()
    no_registry = ProviderRegistry(
        "<no registry>", "no registry", "openai-chat", nothing, nothing, nothing
    )
    return Gate.load(
        policy,
        config,
        catalog if catalog is not None else no_catalog,
        registry if registry is not None else no_registry,
        routes=False,
    )
