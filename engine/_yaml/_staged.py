"""The staged loader every YAML document kind shares: a policy, the provider registry.

A load is a list of named stages over one context (OPA's compiler, STYLE.md): reading the
YAML, then the schema, then each kind's own build and checks. Every stage adds diagnostics
instead of raising, and the stages stop after the first one that leaves an error, so a
linter gets every finding the document allows and a later stage never sees a half-built
input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from .._diagnostics import Diagnostic, has_errors
from . import LoadedYaml, load_yaml

__all__ = ["Staged", "run_stages", "stage_yaml"]


@dataclass
class Staged:
    """What every kind's stages share: the text, its file and what was found so far."""

    text: str
    file: str
    loaded: LoadedYaml | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


Context = TypeVar("Context", bound=Staged)


def stage_yaml(context: Staged) -> None:
    """The first stage of every kind: the YAML, with `line:col` for every node."""
    context.loaded = load_yaml(context.text, context.file)
    context.diagnostics.extend(context.loaded.diagnostics)


def run_stages(
    context: Context, stages: Sequence[tuple[str, Callable[[Context], None]]]
) -> Context:
    """Run `stages` in order on `context`, stopping after the first that leaves an error."""
    for _name, stage in stages:
        stage(context)
        if has_errors(context.diagnostics):
            break
    return context
