"""`auxiliary.vision` of an agent config, read and checked: a pure function of the mapping.

The text lane's backend (`adapters.vision`) is built from these settings, and `lint --config`
and every decision's config warnings run the same checks (`vision_setting_problem`), so a value
the backend would refuse at run time (`timeout: .nan`, `max_retries: -3`) is a located error
before it ever runs. Reading the environment (the key itself) is the backend's, later.

| `auxiliary.vision`                               | backend                                |
|--------------------------------------------------|----------------------------------------|
| absent, empty, `provider: ""`/`auto` (no url)    | local OCR, the embedded default        |
| `provider: local` / `ocr` / `local-ocr`          | local OCR                              |
| known `provider` (`openrouter`, `ollama`, ...)   | openai-compatible, default `base_url`  |
| any `provider` with `base_url`                   | openai-compatible at that url          |
| `provider: main`                                 | the main model's provider, passed in   |
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from visiongate.kernel._display import one_line
from visiongate.kernel._suggest import did_you_mean

from ._ocr import OcrSettings, VisionSettingError, parse_ocr_settings

__all__ = [
    "KNOWN_PROVIDERS",
    "OcrSettings",
    "VisionSettingError",
    "VisionSettings",
    "default_deadline",
    "parse_vision_settings",
]

DEFAULT_MAX_IMAGE_BYTES: Final = 4 * 1024 * 1024
"""Base64 text per image sent to the backend (OpenAI-compatible servers take 5-20 MB)."""
DEFAULT_MAX_EDGE_PX: Final = 2048
"""Long-edge ceiling: vision models downscale past about 1.5-2K pixels anyway."""
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024


def default_deadline(timeout: float) -> float:
    """The whole-call deadline when none is configured: twice the per-step timeout."""
    return 2.0 * timeout


PATH: Final = "auxiliary.vision"
DEFAULT_TIMEOUT_S: Final = 30.0
MAX_TIMEOUT_S: Final = 600.0
MAX_DEADLINE_S: Final = 1800.0
RESPONSE_BYTES_RANGE: Final = (1024, 256 * 1024 * 1024)
IMAGE_BYTES_RANGE: Final = (16 * 1024, 64 * 1024 * 1024)
EDGE_PX_RANGE: Final = (256, 8000)
MAX_RETRIES_LIMIT: Final = 10
LOCAL_OCR_NAMES: Final = frozenset({"local", "ocr", "local-ocr"})
UNSET_NAMES: Final = frozenset({"", "auto"})
_ENV_NAME: Final = re.compile(r"^\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_RESERVED_BODY_KEYS: Final = frozenset({"model", "messages"})


@dataclass(frozen=True)
class ProviderDefaults:
    """Where a known provider listens and which variables usually hold its key."""

    base_url: str
    key_envs: tuple[str, ...] = ()
    """Candidates, first set one wins; empty when the server needs no key."""


KNOWN_PROVIDERS: Final[Mapping[str, ProviderDefaults]] = MappingProxyType(
    {
        "openrouter": ProviderDefaults("https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",)),
        "openai": ProviderDefaults("https://api.openai.com/v1", ("OPENAI_API_KEY",)),
        "gemini": ProviderDefaults(
            "https://generativelanguage.googleapis.com/v1beta/openai",
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        ),
        "ollama": ProviderDefaults("http://localhost:11434/v1"),
        "lmstudio": ProviderDefaults("http://localhost:1234/v1"),
        "vllm": ProviderDefaults("http://localhost:8000/v1"),
        "llamacpp": ProviderDefaults("http://localhost:8080/v1"),
    }
)
ALIASES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "google": "gemini",
        "lm-studio": "lmstudio",
        "llama.cpp": "llamacpp",
        "llama-cpp": "llamacpp",
        "llama_cpp": "llamacpp",
    }
)


@dataclass(frozen=True)
class VisionSettings:
    """`auxiliary.vision`, resolved and checked; reading the environment comes later."""

    kind: Literal["local-ocr", "openai-compatible"] = "local-ocr"
    provider: str = "local"
    model: str = ""
    base_url: str = ""
    api_key_envs: tuple[str, ...] = ()
    """Variables that may hold the key, first set one wins; empty: send no key."""
    timeout: float = DEFAULT_TIMEOUT_S
    deadline: float = default_deadline(DEFAULT_TIMEOUT_S)
    """The whole call, retries and waits included (default: twice `timeout`)."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_retries: int = 3
    extra_body: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES
    """Base64 text per image sent to the backend; images are fitted to it first."""
    max_edge_px: int = DEFAULT_MAX_EDGE_PX
    """Long-edge ceiling of the images sent to the backend."""
    ocr: OcrSettings = field(default_factory=OcrSettings)
    """`auxiliary.vision.ocr`: how local OCR runs (used only when `kind` is `local-ocr`)."""


def parse_vision_settings(
    config: Mapping[str, Any],
    *,
    main_provider: str | None = None,
    main_model: str | None = None,
    main_base_url: str | None = None,
) -> VisionSettings:
    """`auxiliary.vision` as settings; a pure function of its arguments."""
    section = vision_section(config)
    provider = _text(section, "provider").lower()
    model = _text(section, "model")
    base_url = _text(section, "base_url")
    if provider in LOCAL_OCR_NAMES:
        return VisionSettings(ocr=parse_ocr_settings(section))
    if provider in UNSET_NAMES and not base_url:
        _refuse_model_without_provider(model)
        return VisionSettings(ocr=parse_ocr_settings(section))
    if provider == "main":
        provider, model, base_url = _main_provider(
            model, base_url, main_provider, main_model, main_base_url
        )
    provider = ALIASES.get(provider, provider if provider not in UNSET_NAMES else "custom")
    defaults = KNOWN_PROVIDERS.get(provider)
    base_url = _checked_url(base_url or (defaults.base_url if defaults else ""), provider)
    timeout = _seconds(section, "timeout", DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S)
    return VisionSettings(
        kind="openai-compatible",
        provider=provider,
        model=_checked_model(model, provider),
        base_url=base_url,
        api_key_envs=_key_envs(section, defaults),
        timeout=timeout,
        deadline=_seconds(section, "deadline", default_deadline(timeout), MAX_DEADLINE_S),
        max_response_bytes=_whole(
            section,
            "max_response_bytes",
            DEFAULT_MAX_RESPONSE_BYTES,
            RESPONSE_BYTES_RANGE,
            " of bytes",
        ),
        max_retries=_max_retries(section),
        extra_body=_extra_body(section),
        max_image_bytes=_whole(
            section, "max_image_bytes", DEFAULT_MAX_IMAGE_BYTES, IMAGE_BYTES_RANGE
        ),
        max_edge_px=_whole(section, "max_edge_px", DEFAULT_MAX_EDGE_PX, EDGE_PX_RANGE),
    )


def _error(reason: str, code: str, key: str = "", help_text: str = "") -> VisionSettingError:
    path = f"{PATH}.{key}" if key else PATH
    return VisionSettingError(reason, code=code, path=path, help_text=help_text)


def vision_section(config: Mapping[str, Any]) -> Mapping[str, Any]:
    auxiliary = config.get("auxiliary") or {}
    if not isinstance(auxiliary, Mapping):
        raise VisionSettingError(
            "`auxiliary` must be a mapping", code="vision_config_type", path="auxiliary"
        )
    section = auxiliary.get("vision") or {}
    if not isinstance(section, Mapping):
        raise _error(f"`{PATH}` must be a mapping", "vision_config_type")
    return section


def _text(section: Mapping[str, Any], key: str) -> str:
    value = section.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _error(f"`{PATH}.{key}` must be text", "vision_config_type", key)
    return value.strip()


def _refuse_model_without_provider(model: str) -> None:
    if model:
        raise _error(
            f"`{PATH}.model` is set to `{one_line(model, 80)}` but no provider or base url is",
            "vision_provider_missing",
            "provider",
            "set `provider` (for example `openrouter`) or `base_url`, or remove `model` "
            "to use local ocr",
        )


def _main_provider(
    model: str,
    base_url: str,
    main_provider: str | None,
    main_model: str | None,
    main_base_url: str | None,
) -> tuple[str, str, str]:
    """`provider: main` resolved to the main model's provider, model and base url."""
    provider = (main_provider or "").strip().lower()
    if provider in UNSET_NAMES | LOCAL_OCR_NAMES | {"main"}:
        raise _error(
            "`provider: main` needs the main model's provider, and none was given",
            "vision_main_unresolved",
            "provider",
            "set `provider`, `model` (and `base_url` if needed) explicitly",
        )
    return provider, model or (main_model or "").strip(), base_url or (main_base_url or "").strip()


def _checked_url(base_url: str, provider: str) -> str:
    if not base_url:
        raise _error(
            f"provider `{one_line(provider, 60)}` has no known address; set `{PATH}.base_url`",
            "vision_unknown_provider",
            "base_url",
            did_you_mean(provider, list(KNOWN_PROVIDERS)).replace("expected one of", "known:"),
        )
    if not base_url.lower().startswith(("http://", "https://")):
        raise _error(
            f"`{PATH}.base_url` must start with `http://` or `https://`",
            "vision_config_value",
            "base_url",
            "for example `http://localhost:11434/v1`",
        )
    return base_url


def _checked_model(model: str, provider: str) -> str:
    if not model:
        raise _error(
            f"`{PATH}.model` is required for provider `{one_line(provider, 60)}`",
            "vision_model_missing",
            "model",
            "name a model that accepts images, for example `google/gemini-2.5-flash`",
        )
    return model


def _key_envs(section: Mapping[str, Any], defaults: ProviderDefaults | None) -> tuple[str, ...]:
    explicit = _text(section, "api_key_env")
    if explicit:
        return (_env_name(explicit, "api_key_env"),)
    inline = _text(section, "api_key")
    if inline:
        return (_env_name(inline, "api_key"),)
    return defaults.key_envs if defaults else ()


def _env_name(value: str, key: str) -> str:
    # The value may be a pasted key: never echo it, it would land in logs and records.
    match = _ENV_NAME.match(value)
    if key == "api_key" and (match is None or not value.startswith("$")):
        raise _error(
            f"`{PATH}.api_key` holds a literal key; visiongate reads keys only from the "
            "environment",
            "vision_inline_api_key",
            key,
            "move the key to an environment variable and set `api_key_env` to its name",
        )
    if match is None:
        raise _error(
            f"`{PATH}.{key}` must be the name of an environment variable",
            "vision_config_value",
            key,
            "for example `OPENROUTER_API_KEY`",
        )
    return match.group(1)


def _seconds(section: Mapping[str, Any], key: str, default: float, high: float) -> float:
    """A positive number of seconds, at most `high`; `default` when absent."""
    value = section.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _error(f"`{PATH}.{key}` must be a number of seconds", "vision_config_type", key)
    if not 0 < value <= high:
        raise _error(
            f"`{PATH}.{key}` must be above 0 and at most {high:g} seconds",
            "vision_config_value",
            key,
        )
    return float(value)


def _whole(
    section: Mapping[str, Any],
    key: str,
    default: int,
    bounds: tuple[int, int],
    unit: str = "",
) -> int:
    """A whole number setting within `bounds`, `default` when absent."""
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(f"`{PATH}.{key}` must be a whole number{unit}", "vision_config_type", key)
    low, high = bounds
    if not low <= value <= high:
        raise _error(f"`{PATH}.{key}` must be between {low} and {high}", "vision_config_value", key)
    return value


def _max_retries(section: Mapping[str, Any]) -> int:
    return _whole(section, "max_retries", 3, (0, MAX_RETRIES_LIMIT))


def _extra_body(section: Mapping[str, Any]) -> Mapping[str, Any]:
    value = section.get("extra_body") or {}
    if not isinstance(value, Mapping):
        raise _error(f"`{PATH}.extra_body` must be a mapping", "vision_config_type", "extra_body")
    reserved = sorted(_RESERVED_BODY_KEYS & set(value))
    if reserved:
        raise _error(
            f"`{PATH}.extra_body` may not set `{reserved[0]}`; visiongate fills it in",
            "vision_config_value",
            "extra_body",
        )
    return MappingProxyType(dict(value))
