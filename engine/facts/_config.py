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
(`auxiliary.vison`) is reported with a suggestion (`_config_keys`). Only a file that is not
YAML, or not a mapping, stops loading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from visiongate.kernel._suggest import did_you_mean

from .._diagnostics import Diagnostic, Location, PolicyError, Severity, has_errors
from .._settings import (
    EMBED_TARGET_DEFAULT,
    EMBED_TARGET_HELP,
    EMBED_TARGET_MAX,
    EMBED_TARGET_MIN,
    clamp_embed_target,
    clamped_message,
)
from .._vocabulary import FACTS
from .._yaml import DocumentPath, LoadedYaml, load_yaml, read_source_file
from .._yaml import shown as one_line
from ._aux_vision import vision_setting_problem
from ._config_keys import (
    IGNORED,
    MISSPELT_ROUTING_KEY,
    byte_count,
    clean,
    coerce_bool,
    unknown_keys,
)
from ._config_providers import ProviderDeclaration, Sourced, custom_name, read_declaration
from ._keys import model_key, provider_key

__all__ = ["AgentConfig", "ProviderDeclaration", "Sourced", "coerce_bool"]

MODES: Final = FACTS["mode"]
FAIL_CLOSED_MODE: Final = "text"
"""The mode an invalid `agent.image_input_mode` resolves to: pixels never enter the history."""
DEFAULT_ENTRY: Final = "_default"
"""The `model_overrides` entry that fills a gap: read only when the catalog misses the model."""
_UNSET_AUX_PROVIDERS: Final = frozenset({"", "auto"})
_ENV_REFERENCE: Final = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
"""`$VAR` or `${VAR}`: how `auxiliary.vision.api_key` names a variable (as the backend reads it)."""


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
            raise PolicyError([_not_mapping(Location(label))])
        return _Reader(data, None, label).config()

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
            raise PolicyError([_not_mapping(loaded.location(()))])
        return _Reader(data, loaded, Path(file).name).config()

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


def _not_mapping(location: Location) -> Diagnostic:
    return Diagnostic(
        "config-not-mapping",
        "error",
        "the agent config must be a mapping of keys to values",
        location,
        help="an agent config looks like `agent: {image_input_mode: auto}`",
    )


class _Reader:
    """Reads one config mapping, collecting warnings located when the YAML is known."""

    def __init__(self, data: Mapping[str, Any], loaded: LoadedYaml | None, label: str) -> None:
        self.data = data
        self.loaded = loaded
        self.label = label
        self.diagnostics: list[Diagnostic] = []

    def config(self) -> AgentConfig:
        main_model, main_vision = self.main_model()
        main = self.data.get("model")
        main_section = main if isinstance(main, Mapping) else {}
        mode = self.mode()
        providers = self.providers()
        unknown = self.unknown()
        self.ignored()
        misspelt = [d for d in (*self.diagnostics, *unknown) if d.code == MISSPELT_ROUTING_KEY]
        if misspelt and mode.value != FAIL_CLOSED_MODE:
            mode = self.misspelt_mode(misspelt[0])
        return AgentConfig(
            raw=MappingProxyType(dict(self.data)),
            label=self.label,
            mode=mode,
            aux=self.aux(),
            main_model=main_model,
            main_vision=main_vision,
            main_provider=provider_key(clean(main_section.get("provider"))) or None,
            main_base_url=clean(main_section.get("base_url")) or None,
            routes_file=clean(self.section(("visiongate",)).get("routes_file")) or None,
            routes_file_location=self.location(("visiongate", "routes_file")),
            embed_target_bytes=self.embed_target(),
            providers=MappingProxyType(providers),
            model_overrides=MappingProxyType(self.model_overrides()),
            catalog_refresh=self.catalog_refresh(),
            catalog_url=self.catalog_url(),
            diagnostics=tuple(self.diagnostics + unknown),
        )

    def unknown(self) -> list[Diagnostic]:
        """Near misses of keys visiongate reads, outside provider entries."""
        found: list[Diagnostic] = []

        def report(code: str, message: str, path: DocumentPath, help_text: str) -> None:
            severity: Severity = "error" if code == MISSPELT_ROUTING_KEY else "warning"
            found.append(self.diagnostic(severity, code, message, path, help_text, at_key=True))

        unknown_keys(self.data, report)
        return found

    def misspelt_mode(self, error: Diagnostic) -> Sourced[str]:
        """The mode when a key that routes is misspelt: `text`, whatever the mode says."""
        dotted = ".".join(one_line(str(part)) for part in error.document_path)
        provenance = (
            f"{self.label}: misspelt key `{dotted}` ({error.help}): failing closed to "
            f"`{FAIL_CLOSED_MODE}`"
        )
        return Sourced(FAIL_CLOSED_MODE, provenance, (error.warning_text(),))

    def ignored(self) -> None:
        """Name, once each, the production agent's keys that visiongate does not read."""
        for path, why in IGNORED.items():
            parent = self.data.get(path[0])
            if isinstance(parent, Mapping) and parent.get(path[1]) is not None:
                dotted = ".".join(path)
                self.warn("ignored-config-key", f"`{dotted}` is not read by visiongate", path, why)

    # -- helpers ----------------------------------------------------------------------------

    def location(self, path: DocumentPath, at_key: bool = False) -> Location:
        if self.loaded is None:
            return Location(self.label)
        return self.loaded.location(path, key=at_key)

    def diagnostic(
        self,
        severity: Severity,
        code: str,
        message: str,
        path: DocumentPath,
        help_text: str = "",
        at_key: bool = False,
    ) -> Diagnostic:
        location = self.location(path, at_key)
        return Diagnostic(code, severity, message, location, path, help_text)

    def warn(
        self,
        code: str,
        message: str,
        path: DocumentPath,
        help_text: str = "",
        severity: Severity = "warning",
        at_key: bool = False,
    ) -> str:
        diagnostic = self.diagnostic(severity, code, message, path, help_text, at_key)
        self.diagnostics.append(diagnostic)
        return diagnostic.warning_text()

    def shown(self, raw: Any, path: DocumentPath) -> str:
        """A value as the user wrote it (YAML's `off` stays `off`, not `false`)."""
        word = self.loaded.boolean_words.get(path) if self.loaded is not None else None
        if word is not None:
            return word
        return one_line(raw)  # one line, invisible characters escaped, long values cut

    def section(self, path: DocumentPath) -> Mapping[Any, Any]:
        """The mapping at `path`; empty when absent, empty with a warning when not a mapping."""
        level: Mapping[Any, Any] = self.data
        for depth, key in enumerate(path):
            child = level.get(key)
            if child is None:
                return {}
            if not isinstance(child, Mapping):
                dotted = ".".join(one_line(str(part)) for part in path[: depth + 1])
                self.warn(
                    "config-not-mapping",
                    f"`{dotted}` must be a mapping, ignored",
                    path[: depth + 1],
                )
                return {}
            level = child
        return level

    def boolean(self, raw: Any, path: DocumentPath) -> Sourced[bool | None]:
        dotted = ".".join(one_line(str(part)) for part in path)
        value = coerce_bool(raw)
        if value is None:
            warning = self.warn(
                "invalid-boolean",
                f"`{self.shown(raw, path)}` is not a boolean, `{dotted}` ignored",
                path,
                "write true/false (also yes/no, on/off, 1/0)",
            )
            return Sourced(None, f"{self.label}: {dotted} ignored", (warning,))
        return Sourced(value, f"{self.label}: {dotted}: {self.shown(raw, path)}")

    # -- the keys ---------------------------------------------------------------------------

    def mode(self) -> Sourced[str]:
        path: DocumentPath = ("agent", "image_input_mode")
        raw = self.section(path[:1]).get(path[1])
        if raw is None:  # an empty string is a value, and not a mode: it fails closed below
            return Sourced("auto", "default (agent.image_input_mode not set)")
        mode = raw.strip().lower() if isinstance(raw, str) else ""
        if mode in MODES:
            return Sourced(mode, f"{self.label}: agent.image_input_mode: {mode}")
        shown = self.shown(raw, path)
        hint = did_you_mean(shown.strip().lower(), list(MODES))
        if self.loaded is not None and path in self.loaded.boolean_words:
            hint = f"YAML reads `{shown}` as a boolean; {hint}"
        error = self.warn(
            "invalid-mode",
            f"`{shown}` is not an image input mode, failing closed to `{FAIL_CLOSED_MODE}`",
            path,
            hint,
            severity="error",
        )
        provenance = (
            f"{self.label}: agent.image_input_mode: invalid value `{shown}` ({hint}): "
            "failing closed"
        )
        return Sourced(FAIL_CLOSED_MODE, provenance, (error,))

    def aux(self) -> Sourced[str]:
        vision = self.section(("auxiliary", "vision"))
        if not clean(vision.get("api_key_env")):  # which the backend reads first
            self.literal_key(vision.get("api_key"))
        self.vision_values()
        provider = clean(vision.get("provider")).lower()
        where = f"{self.label}: auxiliary.vision"
        if provider not in _UNSET_AUX_PROVIDERS:
            return Sourced("set", f"{where}.provider: {provider}")
        if clean(vision.get("model")):
            return Sourced("set", f"{where}.model: {clean(vision.get('model'))}")
        if clean(vision.get("base_url")):
            # The URL itself is not repeated: it may carry credentials.
            return Sourced("set", f"{where}.base_url is set")
        if not vision:
            return Sourced("unset", "default (auxiliary.vision not set)")
        return Sourced("unset", f"{where}.provider: {provider or 'blank'}, no model or base_url")

    def literal_key(self, raw: Any) -> None:
        """`auxiliary.vision.api_key` names an environment variable (`${VAR}`); a key written
        in the file makes the vision backend refuse to start. The value is never echoed."""
        text = raw.strip() if isinstance(raw, str) else ""  # the backend reads text only
        if not text or _ENV_REFERENCE.match(text):
            return
        self.warn(
            "literal-api-key",
            "`auxiliary.vision.api_key` holds a literal key: the vision backend reads keys only "
            "from the environment and will not start",
            ("auxiliary", "vision", "api_key"),
            "move the key to an environment variable and write `api_key_env: VAR` (or "
            "`api_key: ${VAR}`)",
            severity="error",
        )

    def vision_values(self) -> None:
        """What the vision backend would refuse at run time (`timeout: .nan`), as it checks it
        (`_aux_vision`); a literal key is `literal_key`'s."""
        problem = vision_setting_problem(self.data)
        if problem is None or problem.code == "vision_inline_api_key":
            return
        path = tuple(problem.path.split("."))
        message = f"{problem.reason}: the vision backend will not start"
        self.warn("invalid-vision-setting", message, path, problem.help, severity="error")

    def main_model(self) -> tuple[str | None, Sourced[bool | None] | None]:
        raw = self.data.get("model")
        if isinstance(raw, str):
            return (raw.strip() or None), None
        section = self.section(("model",))
        name = clean(section.get("default")) or clean(section.get("name")) or None
        if section.get("supports_vision") is None:
            return name, None
        return name, self.boolean(section["supports_vision"], ("model", "supports_vision"))

    def catalog_refresh(self) -> bool:
        path: DocumentPath = ("visiongate", "catalog_refresh")
        raw = self.section(path[:1]).get(path[1])
        return bool(raw is not None and self.boolean(raw, path).value)

    def catalog_url(self) -> str | None:
        """`models_dev.url`, when it is an http(s) URL (else a warning, and the default)."""
        path: DocumentPath = ("models_dev", "url")
        raw = self.section(path[:1]).get(path[1])
        url = clean(raw) if isinstance(raw, str) else ""
        if raw is None:
            return None
        if url.lower().startswith(("http://", "https://")):
            return url
        self.warn(
            "invalid-url",
            f"`{self.shown(raw, path)}` is not an http(s) URL, `models_dev.url` ignored",
            path,
            "write the catalog's URL, such as `https://models.dev/api.json`",
        )
        return None

    def embed_target(self) -> Sourced[int | None]:
        path: DocumentPath = ("vision", "embed_target_bytes")
        raw = self.section(path[:1]).get(path[1])
        if raw is None:
            return Sourced(None, "default (vision.embed_target_bytes not set: the policy's value)")
        value = byte_count(raw)
        where = f"{self.label}: vision.embed_target_bytes"
        if value is None:
            shown = self.shown(raw, path)
            warning = self.warn(
                "invalid-byte-count",
                f"`{shown}` is not a byte count, using {EMBED_TARGET_DEFAULT}",
                path,
                EMBED_TARGET_HELP,
            )
            return Sourced(
                EMBED_TARGET_DEFAULT,
                f"{where}: `{shown}` invalid, default {EMBED_TARGET_DEFAULT}",
                (warning,),
            )
        clamped = clamp_embed_target(value)
        if clamped != value:
            message = clamped_message(value, clamped)
            warning = self.warn("clamped-byte-count", message, path, EMBED_TARGET_HELP)
            return Sourced(
                clamped,
                f"{where}: {value} clamped to {clamped} "
                f"(range {EMBED_TARGET_MIN}..{EMBED_TARGET_MAX})",
                (warning,),
            )
        return Sourced(value, f"{where}: {value}")

    def providers(self) -> dict[str, ProviderDeclaration]:
        """`providers.<id>` entries, then the `custom_providers` list (the production agent's
        legacy form; a `providers` entry of the same name wins)."""
        declarations: dict[str, ProviderDeclaration] = {}
        for key in self.section(("providers",)):
            spec = self.section(("providers", key))
            if spec:
                declaration = read_declaration(self, ("providers", key), spec)
                declarations.setdefault(provider_key(str(key)), declaration)
        for index, spec in self.custom_providers():
            name = custom_name(spec.get("name"))
            declaration = read_declaration(self, ("custom_providers", index), spec)
            declarations.setdefault(name, declaration)
        return declarations

    def custom_providers(self) -> list[tuple[int, Mapping[Any, Any]]]:
        """The entries of `custom_providers` that are usable, with their index."""
        raw = self.data.get("custom_providers")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.warn(
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
            self.warn(
                "custom-provider-unnamed",
                f"`custom_providers[{index}]` has no `name`, ignored",
                ("custom_providers", index),
                "give it `name:`, the provider id decisions are asked for",
            )
        return usable

    def model_overrides(self) -> dict[str, Sourced[bool | None]]:
        """`model_overrides.<model>.supports_vision` (alias `vision`) and the production agent's
        nested `model_overrides.<provider>.<model>.supports_vision`, by folded model id
        (`provider/model` for the nested form). `_default` entries are kept under their
        folded key (`_default`, `provider/_default`): `default_vision` reads them."""
        overrides: dict[str, Sourced[bool | None]] = {}
        for key in self.section(("model_overrides",)):
            spec = self.section(("model_overrides", key))
            if (
                _vision_word(spec) is None
                and spec
                and all(isinstance(entry, Mapping) for entry in spec.values())
            ):
                provider = provider_key(str(key))
                for model in spec:
                    path = ("model_overrides", key, model)
                    found = self.override(self.section(path), path)
                    if found is not None:
                        overrides.setdefault(model_key(f"{provider}/{model}"), found)
                continue
            found = self.override(spec, ("model_overrides", key))
            if found is not None:
                overrides.setdefault(model_key(str(key)), found)
        return overrides

    def override(self, spec: Mapping[Any, Any], path: DocumentPath) -> Sourced[bool | None] | None:
        word = _vision_word(spec)
        if word is None:
            return None
        return self.boolean(spec[word], (*path, word))


def _vision_word(spec: Mapping[Any, Any]) -> str | None:
    """Which of `supports_vision` / `vision` an entry sets (the first wins), if either."""
    for word in ("supports_vision", "vision"):
        if spec.get(word) is not None:
            return word
    return None
