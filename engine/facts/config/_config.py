"""The agent's config file, read once: everything the gate needs from it, precomputed.

The key names are those agents such as Hermes Agent use:

| key                                                    | gives                                 |
|--------------------------------------------------------|---------------------------------------|
| `agent.image_input_mode`                               | the `mode` fact (`auto` when missing) |
| `auxiliary.vision.provider` / `.model` / `.base_url`   | the `aux` fact                        |
| `model.default` (or `.name`), `model.supports_vision`  | vision of the main model              |
| `providers.<id>.models.<model>.supports_vision`        | vision of one model (alias `vision`)  |
| `providers.<id>.tool_result_images` (and `.api`)       | declares a provider's tool-result path|
| `vision.embed_target_bytes`                            | the native lane's byte budget         |
| `visiongate.routes_file`                               | where learned and probed routes live  |

A config is untrusted, hand-edited input: a value that cannot be used is ignored with a
warning (`file:line:col` when read from a file) and the safe default applies. An image input
mode that is not one of the three is an error that fails closed: the mode is `text`, so a
typo never opens the native lane. A key that is a near miss of one visiongate reads
(`auxiliary.vison`) is reported with a suggestion (`_known_keys`). Only a file that is not
YAML, or not a mapping, stops loading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..._diagnostics import Diagnostic, Location, PolicyError, has_errors
from ..._yaml import load_yaml, read_source_file
from .._keys import model_key, provider_key
from ._fields import DEFAULT_ENTRY, not_mapping
from ._known_keys import coerce_bool
from ._sourced import Sourced

if TYPE_CHECKING:
    from ._providers import ProviderDeclaration
from ._reader import Reader

__all__ = ["AgentConfig", "Sourced", "coerce_bool"]


@dataclass(frozen=True, eq=False)
class AgentConfig:
    """An agent config, parsed once. Immutable; `raw` is for readers of other sections."""

    raw: Mapping[str, Any]
    """The whole mapping as read (treat it as read-only; the vision backend reads it)."""
    label: str
    """How provenance names this config: the file name, or `agent config`."""
    mode: Sourced[str]
    aux: Sourced[str]
    main_model: str | None
    """`model.default` (or `model.name`, or `model` written as a string), stripped."""
    main_vision: Sourced[bool | None] | None
    """`model.supports_vision`, when present."""
    main_provider: str | None
    """`model.provider`, lower-cased, when the config names it."""
    main_base_url: str | None
    """`model.base_url`, when the config names it."""
    embed_target_bytes: Sourced[int | None]
    """None when not configured, so the policy's own value applies."""
    providers: Mapping[str, ProviderDeclaration]
    """Lower-cased provider id -> its declaration."""
    diagnostics: tuple[Diagnostic, ...] = ()
    routes_file: str | None = None
    """`visiongate.routes_file`: where learned and probed routes are kept (None: the default)."""
    routes_file_location: Location | None = None
    """Where the config names `routes_file`, for an error about the file it names."""
    model_overrides: Mapping[str, Sourced[bool | None]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """`model_overrides.<model>.supports_vision` by folded model id (any provider's)."""
    catalog_refresh: bool = False
    """`visiongate.catalog_refresh`: a long-running process (the proxy) refreshes the catalog."""
    catalog_url: str | None = None
    """`models_dev.url` (the production agent's key): where the catalog is fetched from."""

    @classmethod
    def empty(cls) -> AgentConfig:
        return cls.from_mapping({})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], label: str = "agent config") -> AgentConfig:
        if not isinstance(data, Mapping):
            raise PolicyError([not_mapping(Location(label))])
        return cls(**Reader(data, None, label).config())

    @classmethod
    def from_file(cls, path: str | Path) -> AgentConfig:
        return cls.from_text(read_source_file(path, kind="agent config"), str(path))

    @classmethod
    def from_text(cls, text: str, file: str = "<config>") -> AgentConfig:
        """Parse YAML text; raise `PolicyError` (with `file:line:col`) if it is unusable."""
        loaded = load_yaml(text, file)
        errors = [d for d in loaded.diagnostics if d.code != "empty-document"]
        if has_errors(errors):
            raise PolicyError(errors)
        data = {} if loaded.data is None else loaded.data
        if not isinstance(data, dict):
            raise PolicyError([not_mapping(loaded.location(()))])
        return cls(**Reader(data, loaded, Path(file).name).config())

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning about the config, one line each (errors start with `error: `)."""
        return tuple(d.warning_text() for d in self.diagnostics)

    @cached_property  # read on every `decide_facts`; the config is frozen
    def decision_warnings(self) -> tuple[str, ...]:
        """The warnings that concern every decision: all but those about one provider entry
        (those go only into that provider's decisions)."""
        return tuple(
            warning
            for warning, diagnostic in zip(self.warnings, self.diagnostics, strict=True)
            if not (
                diagnostic.document_path[:1] == ("providers",) and len(diagnostic.document_path) > 2
            )
        )

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Mistakes the gate fails closed on (an invalid image input mode) or that keep a part
        from starting (a literal key for the vision backend)."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def base_url_for(self, provider: str) -> str | None:
        """The base URL the config gives for a provider (`providers.<id>.base_url`, else
        `model.base_url` when `model.provider` names it); None when it gives none."""
        name = provider_key(provider)
        declared = self.providers.get(name)
        if declared is not None and declared.base_url:
            return declared.base_url
        return self.main_base_url if self.main_provider == name else None

    def model_override(self, provider: str, model: str) -> Sourced[bool | None] | None:
        """`model_overrides` for `model`, keyed by the model id or by `provider/model` (the
        nested `model_overrides.<provider>.<model>` form is kept under that key)."""
        if not self.model_overrides or model_key(model) == DEFAULT_ENTRY:
            return None
        found = self.model_overrides.get(model_key(f"{provider_key(provider)}/{model}"))
        return found if found is not None else self.model_overrides.get(model_key(model))

    def default_vision(self, provider: str) -> Sourced[bool | None] | None:
        """The fill-gap default for a model the catalog does not know: the provider's
        `model_overrides.<provider>._default`, else the top-level `model_overrides._default`."""
        if not self.model_overrides:
            return None
        for key in (f"{provider_key(provider)}/{DEFAULT_ENTRY}", DEFAULT_ENTRY):
            found = self.model_overrides.get(key)
            if found is not None and found.value is not None:
                return found
        return None

    def main_vision_for(self, model: str) -> Sourced[bool | None] | None:
        """`model.supports_vision`, if it applies to `model`: the config names no main model,
        or names this one (case-insensitively)."""
        if self.main_vision is None:
            return None
        if self.main_model is None or model_key(self.main_model) == model_key(model):
            return self.main_vision
        return None
