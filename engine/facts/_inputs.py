"""What a gate resolves its facts with: the catalog, registry and routes given to `Gate.load`,
or the bundled and default ones, each module imported when it is first needed.

`Gate.load` with the defaults reads none of them: the proxy answers its first message, and
`decide --facts` decides, before the catalog, the resolver and the learned routes are loaded
(issue 37). A file given is read at load, where the caller catches its errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from ._catalog import ModelCatalog
    from ._resolver import FactResolver
    from ._routes import RouteOverlay
    from .config._config import AgentConfig
    from .registry._registry import ProviderRegistry

__all__ = ["RoutesSource", "catalog_of", "check_routes", "make_resolver", "registry_of"]

RoutesSource: TypeAlias = str | Path | bool | None


def catalog_of(catalog: str | Path | ModelCatalog | None) -> ModelCatalog:
    from ._catalog import ModelCatalog
    from ._catalog_store import current_catalog

    if isinstance(catalog, ModelCatalog):
        return catalog
    # The newest of the bundled snapshot and `visiongate catalog update`'s copy (disk only).
    return current_catalog() if catalog is None else ModelCatalog.from_file(catalog)


def registry_of(registry: str | Path | ProviderRegistry | None) -> ProviderRegistry:
    from .registry._registry import ProviderRegistry

    if isinstance(registry, ProviderRegistry):
        return registry
    return ProviderRegistry.bundled() if registry is None else ProviderRegistry.from_file(registry)


def check_routes(routes: RoutesSource, config: AgentConfig) -> None:
    """A routes file named (by the caller or the config) that is there but no regular file
    is a load error, located at the config's key when the config named it."""
    if isinstance(routes, str | Path):
        from ._routes import check_routes_file

        check_routes_file(routes, None)
    elif routes is not False and config.routes_file:
        from ._routes import check_routes_file

        check_routes_file(config.routes_file, config.routes_file_location)


def make_resolver(
    config: AgentConfig,
    catalog: ModelCatalog | None,
    registry: ProviderRegistry | None,
    routes: RoutesSource,
) -> FactResolver:
    """The resolver over the catalog and registry given (None: the bundled ones)."""
    from ._resolver import FactResolver

    return FactResolver(
        config,
        catalog if catalog is not None else catalog_of(None),
        registry if registry is not None else registry_of(None),
        routes=_routes(routes, config),
    )


def _routes(routes: RoutesSource, config: AgentConfig) -> RouteOverlay:
    from ._routes import RouteOverlay, default_routes_path

    if routes is False:
        return RouteOverlay(None)
    if routes is None or routes is True:
        return RouteOverlay(config.routes_file or default_routes_path())
    return RouteOverlay(routes)
