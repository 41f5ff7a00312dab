"""What a catalog refresh changes, per model, and whether it shrinks too far to accept.

A refresh is compared with the catalog in use before it: a model `gained` or `lost`, and a
model whose input changed `vision -> text` (it lost image input: `auto` now keeps its images
out) or `text -> vision`. A refresh that drops more than half of the providers or of the
models in use (a mirror serving one provider, a truncated file) is refused unless accepted
on purpose: it would turn every other production model into `unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ._catalog import ModelCatalog

__all__ = ["Change", "Shrink", "catalog_changes", "shrink"]

ChangeKind = Literal["gained", "lost", "vision -> text", "text -> vision"]
SHRINK_LIMIT: Final = 0.5
"""The share of the providers or models in use a refresh may drop and still be accepted."""


@dataclass(frozen=True)
class Change:
    """One model the refresh changes."""

    model: str
    """`provider/model`."""
    change: ChangeKind
    before: tuple[str, ...] | None
    """Its `modalities.input` before (None: not listed)."""
    after: tuple[str, ...] | None


@dataclass(frozen=True)
class Shrink:
    """How much of the catalog in use a refresh would drop."""

    providers_before: int
    providers_after: int
    models_before: int
    models_lost: int

    @property
    def too_far(self) -> bool:
        lost_providers = self.providers_before - self.providers_after
        return (
            lost_providers > SHRINK_LIMIT * self.providers_before
            or self.models_lost > SHRINK_LIMIT * self.models_before
        )

    def line(self) -> str:
        return (
            f"it lists {self.providers_after} of the {self.providers_before} providers and "
            f"drops {self.models_lost} of the {self.models_before} models in use"
        )


def catalog_changes(before: ModelCatalog, after: ModelCatalog) -> tuple[Change, ...]:
    """Every model gained, lost or whose image input changed, sorted by model."""
    old, new = before.inputs_by_path(), after.inputs_by_path()
    changes = [Change(path, "gained", None, new[path]) for path in new.keys() - old.keys()]
    changes += [Change(path, "lost", old[path], None) for path in old.keys() - new.keys()]
    for path in old.keys() & new.keys():
        was, now = "image" in old[path], "image" in new[path]
        if was != now:
            changes.append(
                Change(path, "vision -> text" if was else "text -> vision", old[path], new[path])
            )
    return tuple(sorted(changes, key=lambda change: (change.model, change.change)))


def shrink(before: ModelCatalog, after: ModelCatalog, changes: tuple[Change, ...]) -> Shrink:
    kept = sum(1 for provider in before.providers if provider in after.providers)
    lost = sum(1 for change in changes if change.change == "lost")
    return Shrink(len(before.providers), kept, before.model_count, lost)
