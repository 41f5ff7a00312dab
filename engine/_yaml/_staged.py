"""The staged loader every YAML document kind shares: a policy, the provider registry.

A load is a list of named stages over one context (OPA's compiler, STYLE.md): reading the
YAML, then the schema, then each kind's own build and checks. Every stage adds diagnostics
instead of raising, and the stages stop after the first one that leaves an error, so a
linter gets every finding the document allows and a later stage never sees a half-built
input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .._diagnostics import Diagnostic, has_errors
from . import LoadedYaml, load_yaml

__all__ = ["Staged", "run_stages", "stage_yaml"]


class Staged:
    """What every kind's stages share: the text, its file and what was found so far.

    A plain class, not a dataclass: a load's scratch space is no value (never compared nor
    shown), and making a dataclass costs every start-up ~0.7 ms, each kind's context as much
    again (issue 37). A kind's context declares what its stages add as class attributes,
    None until a stage sets them."""

    loaded: LoadedYaml | None = None

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.diagnostics: list[Diagnostic] = []


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
