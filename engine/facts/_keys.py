"""How a provider and a model are named for look-ups: the one home of that normalisation.

A provider id is compared stripped and lower-cased (`" OpenRouter "` is `openrouter`), and
without the production agent's `custom:` prefix (its `model.provider: custom:my-proxy`
names the `custom_providers` entry `my-proxy`); a
model id is kept as given but stripped (catalog ids are case-sensitive, `Qwen/Qwen3-VL`),
and compared case-insensitively where a look-up falls back to that (learned routes, config
declarations). Every table keyed by a (provider, model) pair uses `route_key`.
"""

from __future__ import annotations

__all__ = ["model_id", "model_key", "provider_key", "route_key"]


import functools

CUSTOM_PREFIX = "custom:"


@functools.lru_cache(maxsize=4096)  # called several times per resolution, with few distinct ids
def provider_key(provider: str) -> str:
    """A provider id as every look-up compares it."""
    name = provider.strip().lower()
    rest = name.removeprefix(CUSTOM_PREFIX).strip()
    return rest if rest and name.startswith(CUSTOM_PREFIX) else name


def model_id(model: str) -> str:
    """A model id as given, without surrounding blanks (what records and provenance show)."""
    return model.strip()


def model_key(model: str) -> str:
    """A model id as case-insensitive look-ups compare it."""
    return model.strip().lower()


def route_key(provider: str, model: str) -> tuple[str, str]:
    """The key of a (provider, model) pair in learned routes and caches."""
    return (provider_key(provider), model_key(model))
