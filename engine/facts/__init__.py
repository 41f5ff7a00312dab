"""Stage 1 of a decision: resolving the four facts for a provider and model.

`FactResolver` reads the agent config (`config/`), the model catalog (`_catalog`, for the
`catalog` fact) and the provider registry (`registry/`, for the `path` fact and the payload
limits), and says where every value came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from visiongate.kernel._lazy import lazy_names
from visiongate.kernel.shapes import API_NAMES

if TYPE_CHECKING:
    from ._catalog import ModelCatalog
    from ._pairs import CatalogAnswer, ResolvedFacts
    from ._resolver import FactResolver
    from .config._config import AgentConfig
    from .registry._registry import ProviderOverride, ProviderRegistry, ProviderRoute

# Imported on first use (PEP 562), as `visiongate.engine`'s names: importing one module of the
# facts (the agent config's, say) runs this file first, and must not load the catalog, the
# resolver and the registry with it (issue 37).
_HOMES: dict[str, str] = {
    "CatalogAnswer": "._pairs",
    "ModelCatalog": "._catalog",
    "FactResolver": "._resolver",
    "ResolvedFacts": "._pairs",
    "AgentConfig": ".config._config",
    "ProviderOverride": ".registry._registry",
    "ProviderRegistry": ".registry._registry",
    "ProviderRoute": ".registry._registry",
}

__all__ = [
    "API_NAMES",
    "AgentConfig",
    "CatalogAnswer",
    "FactResolver",
    "ModelCatalog",
    "ProviderOverride",
    "ProviderRegistry",
    "ProviderRoute",
    "ResolvedFacts",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
