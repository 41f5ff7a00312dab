"""Read `auxiliary.vision` from an agent config and build the backend it names.

| `auxiliary.vision`                               | backend                                |
|--------------------------------------------------|----------------------------------------|
| absent, empty, `provider: ""`/`auto` (no url)    | local OCR, the embedded default        |
| `provider: local` / `ocr` / `local-ocr`          | local OCR                              |
| known `provider` (`openrouter`, `ollama`, ...)   | openai-compatible, default `base_url`  |
| any `provider` with `base_url`                   | openai-compatible at that url          |
| `provider: main`                                 | the main model's provider, passed in   |

The key comes from the environment variable in `api_key_env` (or `api_key: ${VAR}`),
else from the provider's usual variable; a literal key in the config is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from ._base import VisionBackend, VisionConfigError, one_line
from ._cache import CachedVisionBackend
from ._http import (
    DEFAULT_MAX_EDGE_PX,
    DEFAULT_MAX_IMAGE_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    OpenAICompatibleBackend,
    default_deadline,
)
from ._ocr import LocalOCRBackend
from ._tuning import OcrSettings, parse_ocr_settings

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


def pooled_backend(config: Mapping[str, Any], provider: str, model: str) -> CachedVisionBackend:
    """`backend_from_config` for `provider` and `model`, as `BackendPool` builds them."""
    return backend_from_config(config, main_provider=provider, main_model=model)


def backend_from_config(
    config: Mapping[str, Any],
    *,
    main_provider: str | None = None,
    main_model: str | None = None,
    main_base_url: str | None = None,
    max_entries: int = 256,
) -> CachedVisionBackend:
    """The cached backend that the agent config's `auxiliary.vision` names.

    `config` is the whole agent config (the mapping that holds `auxiliary`). The main
    model's provider, model and base url are needed only for `provider: main`. Build it
    once per config and reuse it: the description cache lives in the returned object.
    Raises `VisionConfigError` (a `VisionUnavailable`) with a reason that says what to fix.
    """
    settings = parse_vision_settings(
        config, main_provider=main_provider, main_model=main_model, main_base_url=main_base_url
    )
    return CachedVisionBackend(build_backend(settings), max_entries=max_entries)


def build_backend(settings: VisionSettings) -> VisionBackend:
    """The uncached backend for `settings`; checks that the api key variable is set."""
    if settings.kind == "local-ocr":
        return LocalOCRBackend(settings.ocr)
    return OpenAICompatibleBackend(
        provider=settings.provider,
        model=settings.model,
        base_url=settings.base_url,
        api_key_env=_present_key_env(settings),
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        extra_body=settings.extra_body,
        deadline=settings.deadline,
        max_response_bytes=settings.max_response_bytes,
        max_image_bytes=settings.max_image_bytes,
        max_edge_px=settings.max_edge_px,
    )


def parse_vision_settings(
    config: Mapping[str, Any],
    *,
    main_provider: str | None = None,
    main_model: str | None = None,
    main_base_url: str | None = None,
) -> VisionSettings:
    """`auxiliary.vision` as settings; a pure function of its arguments."""
    section = _vision_section(config)
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


def _error(reason: str, code: str, key: str = "", help_text: str = "") -> VisionConfigError:
    path = f"{PATH}.{key}" if key else PATH
    return VisionConfigError(reason, code=code, path=path, help_text=help_text)


def _vision_section(config: Mapping[str, Any]) -> Mapping[str, Any]:
    auxiliary = config.get("auxiliary") or {}
    if not isinstance(auxiliary, Mapping):
        raise VisionConfigError(
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
            "known providers: " + ", ".join(f"`{name}`" for name in KNOWN_PROVIDERS),
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


def _present_key_env(settings: VisionSettings) -> str | None:
    """The first key variable that is set, None when no key is needed."""
    if not settings.api_key_envs:
        return None
    for name in settings.api_key_envs:
        if os.environ.get(name, "").strip():
            return name
    names = " or ".join(f"`{name}`" for name in settings.api_key_envs)
    raise _error(
        f"environment variable {names} is not set; provider `{settings.provider}` needs an api key",
        "vision_api_key_missing",
        "api_key_env",
        "export the key, or set `api_key_env` to the variable that holds it",
    )


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
