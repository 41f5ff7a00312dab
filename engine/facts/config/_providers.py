"""What an agent config declares about providers: `providers.<id>` entries.

| key                                             | gives                                    |
|-------------------------------------------------|------------------------------------------|
| `providers.<id>.tool_result_images` (and `.api`) | declares a provider's tool-result path  |
| `providers.<id>.models.<model>.supports_vision`  | vision of one model (alias `vision`)    |
| `providers.<id>.base_url`                        | which endpoint (Ollama's `/v1`)         |
| `providers.<id>.catalog_provider`                | the catalogued vendor a reseller serves |

The same keys are read in a `custom_providers` entry (the production agent's legacy list).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from visiongate.kernel._suggest import did_you_mean
from visiongate.kernel.shapes import API_NAMES

from ..._diagnostics import Severity
from ..._yaml import DocumentPath
from ..._yaml import shown as one_line
from .._keys import provider_key
from ._known_keys import MISSPELT_ROUTING_KEY, clean, unknown_keys
from ._sourced import Sourced

if TYPE_CHECKING:
    from ..registry._types import ProviderOverride

__all__ = ["ProviderDeclaration", "Reader", "custom_name", "declarations", "read_declaration"]


def custom_name(raw: Any) -> str:
    """A `custom_providers` entry's id as decisions name it (`custom:x` is `x`)."""
    return provider_key(clean(raw))


@dataclass(frozen=True)
class ProviderDeclaration:
    """What the config says about one provider under `providers.<id>`."""

    override: ProviderOverride | None
    models: Mapping[str, Sourced[bool | None]]
    """Model id -> declared vision (None with a warning when the value is unusable)."""
    folded_models: Mapping[str, Sourced[bool | None]]
    warnings: tuple[str, ...] = ()
    base_url: str | None = None
    """`providers.<id>.base_url`: which endpoint of the provider is used (Ollama's `/v1`)."""
    api: str | None = None
    """`api`, when it names an API shape: the override's, or a reseller's (`catalog_provider`)."""
    catalog_provider: str | None = None
    """`catalog_provider`: the catalogued vendor this provider resells (its catalog section;
    its route, unverified, when the registry does not list the reseller)."""
    origin: str = ""
    """Where in the config the declaration is (`providers.my-reseller`, `custom_providers.0`)."""

    def model_vision(self, model: str) -> Sourced[bool | None] | None:
        """The declaration for a model: the exact key first, then case-insensitively."""
        found = self.models.get(model)
        return found if found is not None else self.folded_models.get(model.lower())


class Reader(Protocol):
    """What reading a declaration needs from the config reader."""

    label: str
    data: Mapping[Any, Any]

    def warn(
        self,
        code: str,
        message: str,
        path: DocumentPath,
        help_text: str = "",
        severity: Severity = "warning",
        at_key: bool = False,
    ) -> str: ...

    def boolean(self, raw: Any, path: DocumentPath) -> Sourced[bool | None]: ...

    def section(self, path: DocumentPath) -> Mapping[Any, Any]: ...


def declarations(reader: Reader) -> dict[str, ProviderDeclaration]:
    """`providers.<id>` entries, then the `custom_providers` list (the production agent's
    legacy form; a `providers` entry of the same name wins)."""
    found: dict[str, ProviderDeclaration] = {}
    for key in reader.section(("providers",)):
        spec = reader.section(("providers", key))
        if spec:
            declaration = read_declaration(reader, ("providers", key), spec)
            found.setdefault(provider_key(str(key)), declaration)
    for index, spec in _custom_providers(reader):
        name = custom_name(spec.get("name"))
        declaration = read_declaration(reader, ("custom_providers", index), spec)
        found.setdefault(name, declaration)
    return found


def _custom_providers(reader: Reader) -> list[tuple[int, Mapping[Any, Any]]]:
    """The entries of `custom_providers` that are usable, with their index."""
    raw = reader.data.get("custom_providers")
    if raw is None:
        return []
    if not isinstance(raw, list):
        reader.warn(
            "config-not-list",
            "`custom_providers` must be a list of providers, ignored",
            ("custom_providers",),
            "write each provider as a list item: `- name: my-endpoint`",
        )
        return []
    usable = []
    for index, spec in enumerate(raw):
        if isinstance(spec, Mapping) and custom_name(spec.get("name")):
            usable.append((index, spec))
            continue
        reader.warn(
            "custom-provider-unnamed",
            f"`custom_providers[{index}]` has no `name`, ignored",
            ("custom_providers", index),
            "give it `name:`, the provider id decisions are asked for",
        )
    return usable


def read_declaration(
    reader: Reader, base: DocumentPath, spec: Mapping[Any, Any]
) -> ProviderDeclaration:
    """The declaration at `base`: `("providers", id)`, or `("custom_providers", index)` for
    an entry of the production agent's list of custom endpoints."""
    models = _model_visions(reader, base, spec.get("models"))
    override, warnings = _override(reader, base, spec)

    def report(code: str, message: str, path: DocumentPath, help_text: str) -> None:
        severity: Severity = "error" if code == MISSPELT_ROUTING_KEY else "warning"
        warnings.append(reader.warn(code, message, path, help_text, severity, at_key=True))

    unknown_keys(reader.data, report, only=tuple(str(part) for part in base))
    folded = {model.lower(): value for model, value in reversed(models.items())}
    base_url = clean(spec.get("base_url")) or None
    reseller = provider_key(clean(spec.get("catalog_provider"))) or None
    where = ".".join(str(part) for part in base)
    api = clean(spec.get("api")).lower()
    return ProviderDeclaration(
        override,
        MappingProxyType(models),
        MappingProxyType(folded),
        tuple(warnings),
        base_url,
        api if api in API_NAMES else None,
        reseller,
        where,
    )


def _model_visions(reader: Reader, base: DocumentPath, raw: Any) -> dict[str, Sourced[bool | None]]:
    """`models` as a mapping `{id: {supports_vision: ...}}` or a list of ids or of mappings
    with `name`/`id`/`model`; a plain id declares nothing (a model picker's list)."""
    if isinstance(raw, Mapping):
        items = [(model, spec, model) for model, spec in raw.items()]
    elif isinstance(raw, list):
        items = [(_list_id(spec), spec, index) for index, spec in enumerate(raw)]
    else:
        items = []
    models: dict[str, Sourced[bool | None]] = {}
    for model, spec, where in items:
        if not model or not isinstance(spec, Mapping):
            continue
        word = "supports_vision" if "supports_vision" in spec else "vision"
        if spec.get(word) is not None:
            path = (*base, "models", where, word)
            models[str(model).strip()] = reader.boolean(spec[word], path)
    return models


def _list_id(spec: Any) -> str:
    if isinstance(spec, Mapping):
        return next((clean(spec[k]) for k in ("name", "id", "model") if clean(spec.get(k))), "")
    return ""


def _override(
    reader: Reader, base: DocumentPath, spec: Mapping[Any, Any]
) -> tuple[ProviderOverride | None, list[str]]:
    where = ".".join(str(part) for part in base)
    images = None
    warnings: list[str] = []
    if spec.get("tool_result_images") is not None:
        read = reader.boolean(spec["tool_result_images"], (*base, "tool_result_images"))
        images, warnings = read.value, list(read.warnings)
    api = clean(spec.get("api")).lower() or None
    if api is not None and api not in API_NAMES:
        warnings.append(
            reader.warn(
                "invalid-api",
                f"unknown api `{one_line(api)}`, ignored",
                (*base, "api"),
                did_you_mean(api, list(API_NAMES)),
            )
        )
        api = None
    if api is not None and images is None and not clean(spec.get("catalog_provider")):
        warnings.append(
            reader.warn(
                "api-without-declaration",
                f"`{where}.api` has no effect without `tool_result_images`",
                (*base, "api"),
                "add `tool_result_images: true` (or false) next to it",
            )
        )
    if images is None:
        return None, warnings
    # Here: the registry's values are made only for a config that declares a provider.
    from ..registry._types import ProviderOverride

    return ProviderOverride(images, api, f"{reader.label}: {where}"), warnings
