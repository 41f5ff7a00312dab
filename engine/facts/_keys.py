"""How a provider and a model are named for look-ups: the one home of that normalisation.

A provider id is compared stripped and lower-cased (`" OpenRouter "` is `openrouter`), and
without the production agent's `custom:` prefix (its `model.provider: custom:my-proxy`
names the `custom_providers` entry `my-proxy`); a
model id is kept as given but stripped (catalog ids are case-sensitive, `Qwen/Qwen3-VL`),
and compared case-insensitively where a look-up falls back to that (learned routes, config
declarations). Every table keyed by a (provider, model) pair uses `route_key`.
"""

from __future__ import annotations

from visiongate.kernel._suggest import similarity as _similarity

__all__ = [
    "model_id",
    "model_key",
    "provider_key",
    "route_key",
    "similarity",
    "typo_key",
    "typo_keys",
]


import functools
import re
from typing import Final

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


# -- near misses: the did-you-mean keys ----------------------------------------------------------

_DROPPED_ASCII: Final = "aeiou" + "".join(chr(c) for c in range(128) if not chr(c).isalnum())
_DROPPED: Final = str.maketrans("", "", _DROPPED_ASCII)
_DROPPED_BYTES: Final = _DROPPED_ASCII.encode("ascii")
_REPEATS: Final = re.compile(r"(.)\1+")


def typo_key(model: str) -> str:
    """An id without case, separators or vowels: `claude-sonet-4-5` is `cldsnt45`."""
    folded = model.lower()
    if folded.isascii():  # nearly every id: the bytes `translate` runs in C, table-free
        return folded.encode("ascii").translate(None, _DROPPED_BYTES).decode("ascii")
    return folded.translate(_DROPPED)


def typo_keys(model: str) -> set[str]:
    """The keys a listed id is indexed under: its skeleton, and that without doubled letters,
    so a typo that drops a letter of a pair (`sonet`) finds it too."""
    skeleton = typo_key(model)
    return {skeleton, _REPEATS.sub(r"\1", skeleton)}


def similarity(found: str, model: str) -> float:
    return _similarity(found.lower(), model.lower())
