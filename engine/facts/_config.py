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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from .._diagnostics import Diagnostic, Location, PolicyError, Severity, did_you_mean, has_errors
from .._settings import EMBED_TARGET_DEFAULT, EMBED_TARGET_MAX, EMBED_TARGET_MIN, clamp_embed_target
from .._vocabulary import FACTS
from .._yaml import DocumentPath, LoadedYaml, load_yaml, read_source_file
from .._yaml import shown as one_line
from ._config_keys import byte_count, clean, coerce_bool, unknown_keys
from ._config_providers import ProviderDeclaration, Sourced, read_declaration

__all__ = ["AgentConfig", "ProviderDeclaration", "Sourced", "coerce_bool"]

MODES: Final = FACTS["mode"]
FAIL_CLOSED_MODE: Final = "text"
"""The mode an invalid `agent.image_input_mode` resolves to: pixels never enter the history."""
_UNSET_AUX_PROVIDERS: Final = frozenset({"", "auto"})


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
        return tuple(_warning_text(d) for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Mistakes that made the gate fail closed (an invalid image input mode)."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def base_url_for(self, provider: str) -> str | None:
        """The base URL the config gives for a provider (`providers.<id>.base_url`, else
        `model.base_url` when `model.provider` names it); None when it gives none."""
        name = provider.strip().lower()
        declared = self.providers.get(name)
        if declared is not None and declared.base_url:
            return declared.base_url
        return self.main_base_url if self.main_provider == name else None

    def main_vision_for(self, model: str) -> Sourced[bool | None] | None:
        """`model.supports_vision`, if it applies to `model`: the config names no main model,
        or names this one (case-insensitively)."""
        if self.main_vision is None:
            return None
        if self.main_model is None or self.main_model.lower() == model.strip().lower():
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


def _warning_text(diagnostic: Diagnostic) -> str:
    text = f"{diagnostic.location}: {diagnostic.message}"
    text = f"error: {text}" if diagnostic.severity == "error" else text
    return f"{text}; {diagnostic.help}" if diagnostic.help else text


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
        return AgentConfig(
            raw=MappingProxyType(dict(self.data)),
            label=self.label,
            mode=self.mode(),
            aux=self.aux(),
            main_model=main_model,
            main_vision=main_vision,
            main_provider=clean(main_section.get("provider")).lower() or None,
            main_base_url=clean(main_section.get("base_url")) or None,
            routes_file=clean(self.section(("visiongate",)).get("routes_file")) or None,
            embed_target_bytes=self.embed_target(),
            providers=MappingProxyType(self.providers()),
            diagnostics=tuple(self.diagnostics + self.unknown()),
        )

    def unknown(self) -> list[Diagnostic]:
        """Near misses of keys visiongate reads, outside provider entries."""
        found: list[Diagnostic] = []

        def report(code: str, message: str, path: DocumentPath, help_text: str) -> None:
            found.append(self.diagnostic("warning", code, message, path, help_text, at_key=True))

        unknown_keys(self.data, report)
        return found

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
        return _warning_text(diagnostic)

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

    def main_model(self) -> tuple[str | None, Sourced[bool | None] | None]:
        raw = self.data.get("model")
        if isinstance(raw, str):
            return (raw.strip() or None), None
        section = self.section(("model",))
        name = clean(section.get("default")) or clean(section.get("name")) or None
        if section.get("supports_vision") is None:
            return name, None
        return name, self.boolean(section["supports_vision"], ("model", "supports_vision"))

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
                f"write a whole number of bytes between {EMBED_TARGET_MIN} and {EMBED_TARGET_MAX}",
            )
            return Sourced(
                EMBED_TARGET_DEFAULT,
                f"{where}: `{shown}` invalid, default {EMBED_TARGET_DEFAULT}",
                (warning,),
            )
        clamped = clamp_embed_target(value)
        if clamped != value:
            return Sourced(
                clamped,
                f"{where}: {value} clamped to {clamped} "
                f"(range {EMBED_TARGET_MIN}..{EMBED_TARGET_MAX})",
            )
        return Sourced(value, f"{where}: {value}")

    def providers(self) -> dict[str, ProviderDeclaration]:
        declarations: dict[str, ProviderDeclaration] = {}
        for key in self.section(("providers",)):
            spec = self.section(("providers", key))
            if spec:
                declaration = read_declaration(self, key, spec)
                declarations.setdefault(str(key).strip().lower(), declaration)
        return declarations
