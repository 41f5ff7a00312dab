"""A value read from the agent config, with where it came from (`Sourced`).

Apart from the provider declarations (`_providers`): every config holds sourced values, but
only one that declares a provider needs the declarations' dataclass and reader (issue 37).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Sourced"]

T = TypeVar("T")


@dataclass(frozen=True)
class Sourced(Generic[T]):
    """A value read from the config, with one line saying where it came from."""

    value: T
    provenance: str
    warnings: tuple[str, ...] = ()
