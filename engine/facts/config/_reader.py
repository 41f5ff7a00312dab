"""Reading an agent config mapping into the fields of an `AgentConfig` (`_config`): every
value that cannot be used is a warning located when the YAML is known, and the safe default
applies."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from visiongate.kernel._suggest import did_you_mean

from ..._diagnostics import Diagnostic, Location, Severity
from ..._settings import (
    EMBED_TARGET_DEFAULT,
    EMBED_TARGET_HELP,
    EMBED_TARGET_MAX,
    EMBED_TARGET_MIN,
    clamp_embed_target,
    clamped_message,
)
from ..._yaml import DocumentPath, LoadedYaml
from ..._yaml import shown as one_line
from .._keys import model_key, provider_key
from ._fields import FAIL_CLOSED_MODE, MODES, ConfigFields
from ._known_keys import (
    IGNORED,
    MISSPELT_ROUTING_KEY,
    byte_count,
    clean,
    coerce_bool,
    unknown_keys,
)
from ._sourced import Sourced

if TYPE_CHECKING:
    from ._providers import ProviderDeclaration

_UNSET_AUX_PROVIDERS: Final = frozenset({"", "auto"})
_ENV_REFERENCE: Final = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
"""`$VAR` or `${VAR}`: how `auxiliary.vision.api_key` names a variable (as the backend reads it)."""


class Reader:
    """Reads one config mapping, collecting warnings located when the YAML is known."""

    def __init__(self, data: Mapping[str, Any], loaded: LoadedYaml | None, label: str) -> None:
        self.data = data
        self.loaded = loaded
        self.label = label
        self.diagnostics: list[Diagnostic] = []

    def config(self) -> ConfigFields:
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
        return ConfigFields(
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
        broken = self.vision_values()
        # Still `set` (the operator asked for a backend, and auto mode then keeps pixels out,
        # the closed lane), but the record says the backend will not start.
        said = f" ({broken} error(s) in its settings: the backend will not start)" if broken else ""
        provider = clean(vision.get("provider")).lower()
        where = f"{self.label}: auxiliary.vision"
        if provider not in _UNSET_AUX_PROVIDERS:
            return Sourced("set", f"{where}.provider: {provider}{said}")
        if clean(vision.get("model")):
            return Sourced("set", f"{where}.model: {clean(vision.get('model'))}{said}")
        if clean(vision.get("base_url")):
            # The URL itself is not repeated: it may carry credentials.
            return Sourced("set", f"{where}.base_url is set{said}")
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

    def vision_values(self) -> int:
        """What the vision backend would refuse at run time (`timeout: .nan`), as it checks it
        (`auxiliary`), as findings; how many. A literal key is `literal_key`'s."""
        if "auxiliary" not in self.data:  # as an empty section: none (2 ms of a `decide`)
            return 0
        from ..auxiliary import vision_setting_problems

        found = vision_setting_problems(self.data)
        problems = [problem for problem in found if problem.code != "vision_inline_api_key"]
        for problem in problems:
            path = tuple(problem.path.split("."))
            message = f"{problem.reason}: the vision backend will not start"
            self.warn("invalid-vision-setting", message, path, problem.help, severity="error")
        return len(problems)

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
        """The provider declarations (`_providers.declarations`)."""
        if self.data.get("providers") is None and self.data.get("custom_providers") is None:
            return {}  # none declared: their module and dataclass are not needed (issue 37)
        from ._providers import declarations

        return declarations(self)

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
