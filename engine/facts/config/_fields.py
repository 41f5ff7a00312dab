"""What an agent config is read into (`ConfigFields`, the fields of an `AgentConfig`), and the
values its reader and its queries share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypedDict

from ..._diagnostics import Diagnostic, Location
from ..._vocabulary import FACTS
from ._sourced import Sourced

if TYPE_CHECKING:
    from ._providers import ProviderDeclaration

MODES: Final = FACTS["mode"]
FAIL_CLOSED_MODE: Final = "text"
"""The mode an invalid `agent.image_input_mode` resolves to: pixels never enter the history."""
DEFAULT_ENTRY: Final = "_default"
"""The `model_overrides` entry that fills a gap: read only when the catalog misses the model."""


class ConfigFields(TypedDict):
    """What `Reader.config` reads: the fields of an `AgentConfig`."""

    raw: Mapping[str, Any]
    label: str
    mode: Sourced[str]
    aux: Sourced[str]
    main_model: str | None
    main_vision: Sourced[bool | None] | None
    main_provider: str | None
    main_base_url: str | None
    embed_target_bytes: Sourced[int | None]
    providers: Mapping[str, ProviderDeclaration]
    diagnostics: tuple[Diagnostic, ...]
    routes_file: str | None
    routes_file_location: Location | None
    model_overrides: Mapping[str, Sourced[bool | None]]
    catalog_refresh: bool
    catalog_url: str | None


def not_mapping(location: Location) -> Diagnostic:
    return Diagnostic(
        "config-not-mapping",
        "error",
        "the agent config must be a mapping of keys to values",
        location,
        help="an agent config looks like `agent: {image_input_mode: auto}`",
    )
