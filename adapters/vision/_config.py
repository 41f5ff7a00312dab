"""Build the backend that `auxiliary.vision` of an agent config names.

What the settings mean and how they are checked is the engine's (`engine.facts.auxiliary`:
`lint --config` runs the same checks); here they become a backend. The key comes from the
environment variable in `api_key_env` (or `api_key: ${VAR}`), else from the provider's usual
variable; a literal key in the config is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from visiongate.engine.facts import auxiliary as settings_module
from visiongate.engine.facts.auxiliary import (
    ALIASES,
    DEFAULT_TIMEOUT_S,
    KNOWN_PROVIDERS,
    MAX_DEADLINE_S,
    MAX_TIMEOUT_S,
    PATH,
    VisionSettingError,
    VisionSettings,
)

from ._base import VisionBackend, VisionConfigError
from ._cache import CachedVisionBackend
from ._http import OpenAICompatibleBackend
from ._ocr import LocalOCRBackend

__all__ = [
    "ALIASES",
    "DEFAULT_TIMEOUT_S",
    "KNOWN_PROVIDERS",
    "MAX_DEADLINE_S",
    "MAX_TIMEOUT_S",
    "VisionSettings",
    "backend_from_config",
    "build_backend",
    "parse_vision_settings",
    "pooled_backend",
]


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
    """`auxiliary.vision` as settings; a pure function of its arguments. Raises
    `VisionConfigError` (a `VisionUnavailable`, which the text lane fails closed on)."""
    try:
        return settings_module.parse_vision_settings(
            config, main_provider=main_provider, main_model=main_model, main_base_url=main_base_url
        )
    except VisionSettingError as error:
        raise config_error(error) from None


def config_error(error: VisionSettingError) -> VisionConfigError:
    """The engine's finding as the adapters' exception."""
    return VisionConfigError(error.reason, code=error.code, path=error.path, help_text=error.help)


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


def _error(reason: str, code: str, key: str = "", help_text: str = "") -> VisionConfigError:
    path = f"{PATH}.{key}" if key else PATH
    return VisionConfigError(reason, code=code, path=path, help_text=help_text)
