"""Stage 1 of a decision: resolving the four facts for a provider and model.

`FactResolver` reads the agent config (`config/`), the model catalog (`_catalog`, for the
`catalog` fact) and the provider registry (`registry/`, for the `path` fact and the payload
limits), and says where every value came from.
"""

from visiongate.kernel.shapes import API_NAMES

from ._catalog import CatalogAnswer, ModelCatalog
from ._resolver import FactResolver, ResolvedFacts
from .config._config import AgentConfig
from .registry._registry import ProviderOverride, ProviderRegistry, ProviderRoute

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
