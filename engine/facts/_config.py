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

A config is untrusted, hand-edited input: a value that cannot be used is ignored with a
warning (`file:line:col` when read from a file) and the safe default applies. Only a file
that is not YAML, or not a mapping, is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Generic, TypeVar

from .._diagnostics import Diagnostic, Location, PolicyError, has_errors
from .._settings import EMBED_TARGET_DEFAULT, EMBED_TARGET_MAX, EMBED_TARGET_MIN, clamp_embed_target
from .._validate import did_you_mean
from .._vocabulary import FACTS
from .._yaml import DocumentPath, LoadedYaml, load_yaml, read_source_file
from .._yaml import shown as one_line
from ._registry import API_NAMES, ProviderOverride

T = TypeVar("T")

MODES: Final = FACTS["mode"]
_BOOLEAN_WORDS: Final[Mapping[str, bool]] = MappingProxyType(
    {
        **dict.fromkeys(("true", "yes", "on", "1"), True),
        **dict.fromkeys(("false", "no", "off", "0"), False),
    }
)
_UNSET_AUX_PROVIDERS: Final = frozenset({"", "auto"})


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A value read from the config, with one line saying where it came from."""

    value: T
    provenance: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProviderDeclaration:
    """What the config says about one provider under `providers.<id>`."""

    override: ProviderOverride | None
    models: Mapping[str, Sourced[bool | None]]
    """Model id -> declared vision (None with a warning when the value is unusable)."""
    folded_models: Mapping[str, Sourced[bool | None]]
    warnings: tuple[str, ...] = ()

    def model_vision(self, model: str) -> Sourced[bool | None] | None:
        """The declaration for a model: the exact key first, then case-insensitively."""
        found = self.models.get(model)
        return found if found is not None else self.folded_models.get(model.lower())


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
    embed_target_bytes: Sourced[int | None]
    """None when not configured, so the policy's own value applies."""
    providers: Mapping[str, ProviderDeclaration]
    """Lower-cased provider id -> its declaration."""
    diagnostics: tuple[Diagnostic, ...] = ()

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
        return cls.from_text(read_source_file(path), str(path))

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
        """Every warning about the config, one line each."""
        return tuple(_warning_text(d) for d in self.diagnostics)

    def main_vision_for(self, model: str) -> Sourced[bool | None] | None:
        """`model.supports_vision`, if it applies to `model`: the config names no main model,
        or names this one (case-insensitively)."""
        if self.main_vision is None:
            return None
        if self.main_model is None or self.main_model.lower() == model.strip().lower():
            return self.main_vision
        return None


def coerce_bool(raw: Any) -> bool | None:
    """A bool, 0/1, or a word true/yes/on/1 / false/no/off/0; None for anything else.

    Strict on purpose: `bool("false")` is True, so a loose reading of a quoted `"false"`
    would open the native lane for a model that cannot see.
    """
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        return bool(raw) if raw in (0, 1) else None
    return _BOOLEAN_WORDS.get(raw.strip().lower()) if isinstance(raw, str) else None


def _clean(raw: Any) -> str:
    """A config scalar as stripped text; None, false and empty values are blank."""
    return str(raw or "").strip()


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
        return AgentConfig(
            raw=MappingProxyType(dict(self.data)),
            label=self.label,
            mode=self.mode(),
            aux=self.aux(),
            main_model=main_model,
            main_vision=main_vision,
            embed_target_bytes=self.embed_target(),
            providers=MappingProxyType(self.providers()),
            diagnostics=tuple(self.diagnostics),
        )

    # -- helpers ----------------------------------------------------------------------------

    def location(self, path: DocumentPath) -> Location:
        return self.loaded.location(path) if self.loaded is not None else Location(self.label)

    def warn(self, code: str, message: str, path: DocumentPath, help_text: str = "") -> str:
        diagnostic = Diagnostic(code, "warning", message, self.location(path), path, help_text)
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
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return Sourced("auto", "default (agent.image_input_mode not set)")
        mode = raw.strip().lower() if isinstance(raw, str) else ""
        if mode in MODES:
            return Sourced(mode, f"{self.label}: agent.image_input_mode: {mode}")
        shown = self.shown(raw, path)
        hint = did_you_mean(shown.strip().lower(), list(MODES))
        if self.loaded is not None and path in self.loaded.boolean_words:
            hint = f"YAML reads `{shown}` as a boolean; {hint}"
        warning = self.warn(
            "invalid-mode", f"`{shown}` is not an image input mode, using `auto`", path, hint
        )
        return Sourced("auto", f"default (agent.image_input_mode `{shown}` is invalid)", (warning,))

    def aux(self) -> Sourced[str]:
        vision = self.section(("auxiliary", "vision"))
        provider = _clean(vision.get("provider")).lower()
        where = f"{self.label}: auxiliary.vision"
        if provider not in _UNSET_AUX_PROVIDERS:
            return Sourced("set", f"{where}.provider: {provider}")
        if _clean(vision.get("model")):
            return Sourced("set", f"{where}.model: {_clean(vision.get('model'))}")
        if _clean(vision.get("base_url")):
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
        name = _clean(section.get("default")) or _clean(section.get("name")) or None
        if section.get("supports_vision") is None:
            return name, None
        return name, self.boolean(section["supports_vision"], ("model", "supports_vision"))

    def embed_target(self) -> Sourced[int | None]:
        path: DocumentPath = ("vision", "embed_target_bytes")
        raw = self.section(path[:1]).get(path[1])
        if raw is None:
            return Sourced(None, "default (vision.embed_target_bytes not set: the policy's value)")
        value = _byte_count(raw)
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
                declarations.setdefault(str(key).strip().lower(), self.declaration(key, spec))
        return declarations

    def declaration(self, key: Any, spec: Mapping[Any, Any]) -> ProviderDeclaration:
        models: dict[str, Sourced[bool | None]] = {}
        raw_models = spec.get("models")
        # `models` may also be a plain list of ids (a model picker's list): nothing to read.
        for model, model_spec in raw_models.items() if isinstance(raw_models, Mapping) else ():
            if isinstance(model_spec, Mapping):
                word = "supports_vision" if "supports_vision" in model_spec else "vision"
                if model_spec.get(word) is not None:
                    path = ("providers", key, "models", model, word)
                    models[str(model).strip()] = self.boolean(model_spec[word], path)
        override, warnings = self.override(key, spec)
        folded = {model.lower(): value for model, value in reversed(models.items())}
        return ProviderDeclaration(
            override, MappingProxyType(models), MappingProxyType(folded), warnings
        )

    def override(
        self, key: Any, spec: Mapping[Any, Any]
    ) -> tuple[ProviderOverride | None, tuple[str, ...]]:
        base: DocumentPath = ("providers", key)
        images = None
        warnings: list[str] = []
        if spec.get("tool_result_images") is not None:
            read = self.boolean(spec["tool_result_images"], (*base, "tool_result_images"))
            images, warnings = read.value, list(read.warnings)
        api = _clean(spec.get("api")).lower() or None
        if api is not None and api not in API_NAMES:
            warnings.append(
                self.warn(
                    "invalid-api",
                    f"unknown api `{one_line(api)}`, ignored",
                    (*base, "api"),
                    did_you_mean(api, list(API_NAMES)),
                )
            )
            api = None
        if api is not None and images is None:
            warnings.append(
                self.warn(
                    "api-without-declaration",
                    f"`providers.{key}.api` has no effect without `tool_result_images`",
                    (*base, "api"),
                    "add `tool_result_images: true` (or false) next to it",
                )
            )
        if images is None:
            return None, tuple(warnings)
        return ProviderOverride(images, api, f"{self.label}: providers.{key}"), tuple(warnings)


def _byte_count(raw: Any) -> int | None:
    """A whole number of bytes from an int, an integral float or a numeric string."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if raw.is_integer() else None
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            return None
    return None
